"""Media inspection: probing containers and streams, reading audio tags, processing images."""
