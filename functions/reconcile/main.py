"""Handoff reconcile: functions-framework target ``reconcile`` (Cloud Tasks target, private).

Not built yet (issue 3): answers 501 so a queue never mistakes it for success.
"""
import functions_framework


@functions_framework.http
def reconcile(request):
    """Cloud Tasks HTTP task (flask.Request) → 501 until the handoff issue lands."""
    return {"error": "not implemented yet"}, 501
