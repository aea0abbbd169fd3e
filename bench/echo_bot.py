"""Baseline for P1/P2/P6 of ``make bench``: the smallest honest LINE echo bot on line-bot-sdk v3.

What a developer would write instead of LOCAL, after line-bot-sdk-python's own echo example
(https://github.com/line/line-bot-sdk-python, examples/flask-echo): verify ``X-Line-Signature``
and parse the body with ``WebhookParser``, then answer every text message with the same text
through ``MessagingApi.reply_message``. It stores nothing and deduplicates nothing. One API client
is kept for the process (the stronger baseline: the example's client-per-request is slower).

Start: ``python -m functions_framework --source bench/echo_bot.py --target echo``.
Environment (read here because this file stands apart from LOCAL): ``LINE_CHANNEL_SECRET``,
``LINE_CHANNEL_ACCESS_TOKEN``, ``LINE_API_BASE_URL`` (the LINE stand-in in the bench).
"""
import os

import functions_framework
from linebot.v3 import WebhookParser
from linebot.v3.exceptions import InvalidSignatureError
from linebot.v3.messaging import ApiClient, Configuration, MessagingApi, ReplyMessageRequest, TextMessage
from linebot.v3.webhooks import MessageEvent, TextMessageContent

_configuration = Configuration(host=os.environ.get("LINE_API_BASE_URL", "https://api.line.me"),
                               access_token=os.environ["LINE_CHANNEL_ACCESS_TOKEN"])
_parser = WebhookParser(os.environ["LINE_CHANNEL_SECRET"])
_api = MessagingApi(ApiClient(_configuration))


@functions_framework.http
def echo(request):
    """One LINE delivery (flask.Request) → "OK" 200, or 400 for a bad signature."""
    signature = request.headers.get("X-Line-Signature", "")
    body = request.get_data(as_text=True)
    try:
        events = _parser.parse(body, signature)
    except InvalidSignatureError:
        return "Invalid signature", 400
    for event in events:
        if isinstance(event, MessageEvent) and isinstance(event.message, TextMessageContent):
            _api.reply_message(ReplyMessageRequest(reply_token=event.reply_token,
                                                   messages=[TextMessage(text=event.message.text)]))
    return "OK"
