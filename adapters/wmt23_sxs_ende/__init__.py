"""WMT23 side-by-side MQM, English to German (Song et al., 2025)."""
