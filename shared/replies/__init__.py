"""Fixed reply templates (line-bot-sdk message models) for place and event results."""
