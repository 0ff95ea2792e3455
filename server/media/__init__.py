"""Media inspection used by the library scanner and playback. All functions are blocking.

- ``probe``: ``probe_file`` (PyAV) -> ``MediaProbe`` with streams in MediaStream terms
- ``streams``: ``ProbedStream``/``ProbedChapter``/``ProbedAttachment`` and their ``to_wire()``
- ``tags``: ``read_audio_tags`` and ``embedded_picture`` (mutagen)
- ``images``: ``image_info``, ``render_image``, ``blurhash_of``, ``image_tag``,
  ``extract_video_frame`` (Pillow, blurhash-rs, ffmpeg CLI)
- ``languages``, ``names``: language codes and multi-name tag splitting
"""
