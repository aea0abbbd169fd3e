"""LINE webhook: functions-framework target ``webhook`` (HTTP, public, signature required).

Start: ``python -m functions_framework --source functions/webhook/main.py --target webhook``.
Settings are checked at import so a missing secret stops start-up; the store and the LINE
client are built on the first request, in the worker (DESIGN §9).
"""
import functools

import functions_framework

from shared import wiring
from shared.config import WEBHOOK_REQUIRED, Settings
from shared.webhook import service as _service_module  # noqa: F401  (import cost paid at start-up, not in LINE's 2 s)

SETTINGS = Settings.from_env(required=WEBHOOK_REQUIRED)


@functools.cache
def _service():
    return wiring.webhook_service(SETTINGS)


@functions_framework.http
def webhook(request):
    """Handle one LINE delivery (flask.Request, POST, JSON body) → (JSON body, status)."""
    if request.method != "POST":
        return {"error": "POST only"}, 405
    result = _service().handle(request.get_data(as_text=True), request.headers.get("X-Line-Signature"))
    return result.body, result.status
