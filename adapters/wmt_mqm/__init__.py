"""WMT MQM human evaluations (google/wmt-mqm-human-evaluation)."""
