"""WMT23 side-by-side MQM, Chinese to English (Song et al., 2025)."""
