"""LAN presence: UDP auto-discovery, zeroconf advertising and Wake-on-LAN."""
