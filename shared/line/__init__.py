"""LINE Messaging API port (reply, push, loading animation) and its errors."""
from shared.line.port import LineApiError, LineGateway, LineOutcomeUnknown, PushResult  # noqa: F401
