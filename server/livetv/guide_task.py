"""The "RefreshGuide" scheduled task: reload the listings, then apply the series timers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from server.livetv.tuners import GuideRefreshError
from server.tasks.scheduler import Progress, interval, startup
from server.wire import models as w

if TYPE_CHECKING:
    from server.livetv.recordings import RecordingService
    from server.livetv.tuners import LiveTvService


@dataclass
class RefreshGuideTask:
    livetv: LiveTvService
    recordings: RecordingService
    key: str = "RefreshGuide"
    name: str = "Refresh Guide"
    description: str = "Reads the TV guide from the listing providers and schedules series recordings."
    category: str = "Live TV"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [startup(), interval(24)])

    async def run(self, progress: Progress) -> None:
        try:
            await self.livetv.refresh_guide()
        except GuideRefreshError:
            await self.recordings.apply_series_timers()  # from what the other providers gave
            raise  # the task ends Failed with the reason
        progress(80)
        await self.recordings.apply_series_timers()
        progress(100)
