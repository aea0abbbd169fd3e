"""Model configuration: one reader of the environment (shared/config.py), google-genai's own
variables honoured, the router the default without a key (docs/design.md §8)."""
from __future__ import annotations

import pytest

from shared.config import ConfigError, Settings

# shared.agent.agent (google.adk, google.genai) is imported by the test that uses it, not at collection:
# every xdist worker collects every file, and one runs this one.


@pytest.mark.parametrize("env, backend", [
    ({}, "offline"),
    ({"GEMINI_API_KEY": "k"}, "gemini"),
    ({"GEMINI_API_KEY": "k", "LOCAL_MODEL": "offline"}, "offline"),
    ({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}, "vertex"),
    ({"LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"}, "standin"),
    ({"LOCAL_MODEL": "standin", "GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"}, "standin"),
])
def test_model_settings_backend_follows_the_environment(env, backend):
    assert Settings.from_env(env).model_backend == backend


def test_model_settings_defaults_are_documented_values():
    settings = Settings.from_env({})
    assert (settings.model_id, settings.model_timeout_seconds, settings.model_thinking_level) == (
        "gemini-2.5-flash", 12.0, None)


def test_model_settings_list_every_problem_at_once():
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"LOCAL_MODEL": "standin", "LOCAL_MODEL_THINKING_LEVEL": "max",
                           "LOCAL_MODEL_TIMEOUT_SECONDS": "0"})
    assert len(refused.value.problems) == 3
    with pytest.raises(ConfigError, match="GOOGLE_CLOUD_PROJECT"):
        Settings.from_env({"GOOGLE_GENAI_USE_VERTEXAI": "1"})
    with pytest.raises(ConfigError, match="LOCAL_MODEL must be"):
        Settings.from_env({"LOCAL_MODEL": "gpt"})


def test_model_settings_client_kwargs_per_backend():
    from shared.agent.agent import STANDIN_API_KEY, client_kwargs

    gemini = client_kwargs(Settings.from_env({"GEMINI_API_KEY": "k", "LOCAL_MODEL_TIMEOUT_SECONDS": "2.5"}))
    tls = gemini["http_options"].pop("client_args")["verify"]
    assert gemini["http_options"].pop("async_client_args") == {"verify": tls, "ssl": tls}
    assert gemini == {"vertexai": False, "api_key": "k", "http_options": {"timeout": 2500}}
    vertex = client_kwargs(Settings.from_env({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p",
                                              "GOOGLE_CLOUD_LOCATION": "asia-east1"}))
    assert (vertex["vertexai"], vertex["project"], vertex["location"]) == (True, "p", "asia-east1")
    assert "client_args" not in vertex["http_options"]  # google-genai's own context: it may carry mTLS
    standin = client_kwargs(Settings.from_env({"LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"}))
    assert (standin["api_key"], standin["http_options"]["base_url"]) == (STANDIN_API_KEY, "http://127.0.0.1:1")
    with pytest.raises(ValueError):
        client_kwargs(Settings.from_env({}))


def test_agent_tool_schema_literals_are_the_one_diet_and_township_table():
    from typing import get_args

    from shared.agent import calls
    from shared.areas import TOWNSHIPS
    from shared.diets import DIET_LABELS, DIET_TYPES, SAVABLE_DIETS

    assert get_args(calls.Diet) == DIET_TYPES == tuple(DIET_LABELS)
    assert get_args(calls.Savable) == SAVABLE_DIETS and "any" not in SAVABLE_DIETS
    assert get_args(calls.Township) == TOWNSHIPS


def test_model_settings_clients_share_one_verifying_tls_context(monkeypatch):
    """Every turn builds a google-genai client (build_agent); each would load the CA bundle for its
    httpx, aiohttp and websocket transports. The process builds one context, and it verifies."""
    import ssl

    from google import genai

    from shared.agent.agent import client_kwargs, tls_context

    tls_context.cache_clear()
    built = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: built.append(k) or real(*a, **k))
    for env in ({"GEMINI_API_KEY": "k"}, {"LOCAL_MODEL": "standin", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"},
                {"GEMINI_API_KEY": "k"}):
        genai.Client(**client_kwargs(Settings.from_env(env)))
    assert len(built) == 1
    context = tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0  # the CA bundle is loaded
