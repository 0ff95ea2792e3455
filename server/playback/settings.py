"""Playback's configuration sections: ``encoding`` (the spec's EncodingOptions) and Reelroom's own
``transcoding`` (limits of the HLS job manager). Registered on the ConfigurationStore by
``server/context.py``."""

from __future__ import annotations

from typing import Any

from server.errors import BadRequestError
from server.paths import ServerPaths
from server.system.configuration import ConfigSection
from server.wire import models as w

TRANSCODING_DEFAULTS: dict[str, Any] = {
    "MaxConcurrentTranscodes": 8,  # 0: no limit
    "IdleTimeoutSeconds": 60,
    "ThrottleAheadSegments": 30,  # 0: never throttle
}


def validate_transcoding_settings(data: dict[str, Any]) -> dict[str, Any]:
    """The ``transcoding`` configuration section with its defaults; BadRequestError when wrong."""
    merged = dict(TRANSCODING_DEFAULTS)
    for key, default in TRANSCODING_DEFAULTS.items():
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise BadRequestError(f"{key} must be a non-negative number.")
        merged[key] = type(default)(value)
    if merged["IdleTimeoutSeconds"] <= 0:
        raise BadRequestError("IdleTimeoutSeconds must be positive.")
    return merged


def default_encoding_options(paths: ServerPaths) -> w.EncodingOptions:
    return w.EncodingOptions(
        EncodingThreadCount=-1, TranscodingTempPath=str(paths.transcode_dir), FallbackFontPath="",
        EnableFallbackFont=False, EnableAudioVbr=False, DownMixAudioBoost=2.0, DownMixStereoAlgorithm="None",
        MaxMuxingQueueSize=2048, EnableThrottling=False, ThrottleDelaySeconds=180, EnableSegmentDeletion=False,
        SegmentKeepSeconds=720, HardwareAccelerationType="none", EncoderAppPath="", EncoderAppPathDisplay="",
        VaapiDevice="/dev/dri/renderD128", QsvDevice="", EnableTonemapping=False, EnableVppTonemapping=False,
        EnableVideoToolboxTonemapping=False, TonemappingAlgorithm="bt2390", TonemappingMode="auto",
        TonemappingRange="auto", TonemappingDesat=0, TonemappingPeak=100, TonemappingParam=0,
        VppTonemappingBrightness=16, VppTonemappingContrast=1, H264Crf=23, H265Crf=28, EncoderPreset="auto",
        DeinterlaceDoubleRate=False, DeinterlaceMethod="yadif", EnableDecodingColorDepth10Hevc=True,
        EnableDecodingColorDepth10Vp9=True, EnableDecodingColorDepth10HevcRext=False,
        EnableDecodingColorDepth12HevcRext=False, EnableEnhancedNvdecDecoder=False,
        PreferSystemNativeHwDecoder=True, EnableIntelLowPowerH264HwEncoder=False,
        EnableIntelLowPowerHevcHwEncoder=False, EnableHardwareEncoding=True, AllowHevcEncoding=False,
        AllowAv1Encoding=False, EnableSubtitleExtraction=True, HardwareDecodingCodecs=["h264", "vc1"],
        AllowOnDemandMetadataBasedKeyframeExtractionForExtensions=["mkv"],
    )


SECTIONS = (
    ConfigSection("encoding", default_encoding_options, wire_type=w.EncodingOptions),
    ConfigSection("transcoding", lambda _paths: dict(TRANSCODING_DEFAULTS), validate=validate_transcoding_settings),
)
