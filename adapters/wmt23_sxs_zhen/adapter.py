"""WMT23 side-by-side MQM, Chinese to English: 377 paragraphs x 10 systems x 3 raters."""

from __future__ import annotations

from nnd_suites.adapters.wmt_mqm.sxs import WmtSxsMqmAdapter, sxs_metadata
from nnd_suites.builder.adapter import register_adapter


@register_adapter("wmt23_sxs_zhen")
class Wmt23SxsZhenAdapter(WmtSxsMqmAdapter):
    """The zh-en release (shipped, Apache-2.0)."""

    default_source = "sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz"
    metadata = sxs_metadata("zh", "en")

    @property
    def release_pair(self) -> tuple[str, str]:
        return ("zh", "en")
