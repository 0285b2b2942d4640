"""MQM segment scores of any mt-metrics-eval-v2 year folder (WMT metrics task data)."""
