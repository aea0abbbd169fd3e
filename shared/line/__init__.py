"""LINE Messaging API port (reply, push, loading animation, quota), its outcome table and its errors."""
from shared.line.port import (  # noqa: F401
    Delivery,
    LineApiError,
    LineGateway,
    LineNeverStarted,
    LineOutcomeUnknown,
    LineSendError,
    PushResult,
    Quota,
    TooMany,
    delivery_of,
    delivery_of_status,
    monthly_limit,
)
