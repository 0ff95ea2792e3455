"""Images: where they come from, resizing through a disk cache, uploads (ImageService)."""
