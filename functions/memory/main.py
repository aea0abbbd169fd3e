"""Consented dietary memory: functions-framework target ``memory`` (private).

Not built yet (issue 4): answers 501.
"""
import functions_framework


@functions_framework.http
def memory(request):
    """Approve/forget call (flask.Request) → 501 until the memory issue lands."""
    return {"error": "not implemented yet"}, 501
