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
    assert (settings.model_id, settings.model_timeout_seconds, settings.model_thinking_level,
            settings.model_thinking_budget) == ("gemini-3.8-flash", 12.0, "low", None)
    older = Settings.from_env({"LOCAL_MODEL_ID": "gemini-2.5-flash"})  # a 2.5 model: its own default, no level
    assert (older.model_thinking_level, older.model_thinking_budget) == (None, None)


@pytest.mark.parametrize("env, level, budget", [
    ({"LOCAL_MODEL_THINKING_LEVEL": "HIGH"}, "high", None),
    ({"LOCAL_MODEL_ID": "gemini-3.6-flash", "LOCAL_MODEL_THINKING_LEVEL": "minimal"}, "minimal", None),
    ({"LOCAL_MODEL_ID": "gemini-2.5-flash", "LOCAL_MODEL_THINKING_BUDGET": "0"}, None, 0),
    ({"LOCAL_MODEL_ID": "gemini-2.5-flash-lite", "LOCAL_MODEL_THINKING_BUDGET": "-1"}, None, -1),
    ({"LOCAL_MODEL_ID": "projects/p/locations/global/publishers/google/models/gemini-3.8-flash"}, "low", None),
], ids=["level-on-3", "level-on-3.6", "budget-off-on-2.5", "dynamic-budget-on-2.5-lite", "vertex-resource-name"])
def test_model_settings_thinking_setting_fits_the_model_family(env, level, budget):
    settings = Settings.from_env(env)
    assert (settings.model_thinking_level, settings.model_thinking_budget) == (level, budget)


@pytest.mark.parametrize("env, words", [
    ({"LOCAL_MODEL_ID": "gemini-2.5-flash", "LOCAL_MODEL_THINKING_LEVEL": "low"},
     "LOCAL_MODEL_THINKING_LEVEL is for Gemini 3 models; gemini-2.5-flash takes LOCAL_MODEL_THINKING_BUDGET instead"),
    ({"LOCAL_MODEL_THINKING_BUDGET": "1024"},
     "LOCAL_MODEL_THINKING_BUDGET is for Gemini 2.5 models; gemini-3.8-flash takes LOCAL_MODEL_THINKING_LEVEL instead"),
    ({"LOCAL_MODEL_THINKING_LEVEL": "low", "LOCAL_MODEL_THINKING_BUDGET": "0", "LOCAL_MODEL_ID": "gemini-2.5-flash"},
     "set LOCAL_MODEL_THINKING_LEVEL or LOCAL_MODEL_THINKING_BUDGET, not both"),
    ({"LOCAL_MODEL_ID": "gemma-3-27b-it", "LOCAL_MODEL_THINKING_LEVEL": "low"}, "takes no thinking setting"),
    ({"LOCAL_MODEL_ID": "gemini-2.5-flash", "LOCAL_MODEL_THINKING_BUDGET": "lots"}, "whole number of tokens"),
    ({"LOCAL_MODEL_ID": "gemini-2.5-flash", "LOCAL_MODEL_THINKING_BUDGET": "99999"}, "from -1 (dynamic) to 24576"),
], ids=["level-on-2.5", "budget-on-3", "both", "unknown-family", "budget-not-a-number", "budget-too-large"])
def test_model_settings_wrong_thinking_pairing_refuses_to_start(env, words):
    """Refused when the settings are read (a function's start-up), never an HTTP 400 at a resident's turn."""
    with pytest.raises(ConfigError) as refused:
        Settings.from_env(env)
    assert any(words in problem for problem in refused.value.problems)


def test_model_settings_built_directly_refuse_a_wrong_pairing_with_a_value_error():
    base = Settings.from_env({})
    import dataclasses

    with pytest.raises(ValueError, match="LOCAL_MODEL_THINKING_LEVEL is for Gemini 3 models"):
        dataclasses.replace(base, model_id="gemini-2.5-flash")  # keeps the default level "low"
    assert dataclasses.replace(base, model_id="gemini-2.5-flash", model_thinking_level=None).model_thinking_level is None


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
    from shared.agent.client import STANDIN_API_KEY, client_kwargs

    gemini = client_kwargs(Settings.from_env({"GEMINI_API_KEY": "k", "LOCAL_MODEL_TIMEOUT_SECONDS": "2.5"}))
    tls = gemini["http_options"].pop("client_args")["verify"]
    assert gemini["http_options"].pop("async_client_args") == {"verify": tls, "ssl": tls}
    assert gemini["http_options"].pop("retry_options").attempts == 1  # 2.5 s leaves no room for a retry
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

    from shared.agent.client import client_kwargs, tls_context

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
