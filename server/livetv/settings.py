"""Live TV's configuration section: ``livetv`` (the spec's LiveTvOptions: tuners, listing
providers, recording folders). Registered on the ConfigurationStore by ``server/context.py``."""

from __future__ import annotations

from server.system.configuration import ConfigSection
from server.wire import models as w


def default_livetv_options() -> w.LiveTvOptions:
    return w.LiveTvOptions(GuideDays=None, RecordingPath="", MovieRecordingPath="", SeriesRecordingPath="",
                           EnableRecordingSubfolders=False, EnableOriginalAudioWithEncodedRecordings=False,
                           TunerHosts=[], ListingProviders=[], PrePaddingSeconds=0, PostPaddingSeconds=0,
                           MediaLocationsCreated=[], RecordingPostProcessorArguments="\"{path}\"",
                           SaveRecordingNFO=True, SaveRecordingImages=True)


SECTIONS = (ConfigSection("livetv", lambda _paths: default_livetv_options(), wire_type=w.LiveTvOptions),)
