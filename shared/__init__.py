"""LOCAL's common package: configuration, ports and adapters, and one module per domain."""
