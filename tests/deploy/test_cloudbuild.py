"""cloudbuild.yaml, read as data: substitutions, secrets, env names, flags and step order."""
from __future__ import annotations

import re

from shared.config import Settings
from tests.deploy.deploy_support import REPO, cloudbuild, config_env_names, locals_, variables
from tests.deploy.test_infra import _deploy_flags

#: Substitutions Cloud Build itself provides (Cloud Build docs, "Substituting variable values").
BUILT_IN = {"PROJECT_ID", "PROJECT_NUMBER", "BUILD_ID", "LOCATION", "TRIGGER_NAME", "COMMIT_SHA",
            "SHORT_SHA", "REVISION_ID", "BRANCH_NAME", "TAG_NAME", "REPO_NAME", "REPO_FULL_NAME",
            "SERVICE_ACCOUNT_EMAIL", "SERVICE_ACCOUNT"}


def _text() -> str:
    return (REPO / "cloudbuild.yaml").read_text()


def _steps() -> dict[str, dict]:
    return {step["id"]: step for step in cloudbuild()["steps"]}


def _env_pairs(value: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in value.split(","))


def test_cloudbuild_every_substitution_defined_and_used():
    text = _text()
    # A single $ is Cloud Build's; $$ is the shell's. Strip $$ first, then read what is left.
    singles = re.sub(r"\$\$", "", text)
    used = set(re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", singles))
    defined = set(cloudbuild()["substitutions"])
    assert used - BUILT_IN <= defined, f"undefined: {sorted(used - BUILT_IN - defined)}"
    assert defined <= used, f"defined but unused (Cloud Build refuses them): {sorted(defined - used)}"
    assert all(name.startswith("_") for name in defined)


def test_cloudbuild_shell_variables_are_escaped():
    # Inside the scripts every lower-case variable is the shell's, so it must be written $$name.
    for step in cloudbuild()["steps"]:
        script = "\n".join(step.get("args", []))
        bare = re.findall(r"(?<!\$)\$\{?([a-z][a-z0-9_]*)", script)
        assert not bare, (step["id"], bare)
        bare_upper = {n for n in re.findall(r"(?<!\$)\$\{?([A-Z][A-Z0-9_]*)", script)}
        assert bare_upper <= BUILT_IN | set(cloudbuild()["substitutions"]), (step["id"], bare_upper)


def test_cloudbuild_step_order_test_bundle_private_then_public_then_smoke():
    steps = _steps()
    order = [s["id"] for s in cloudbuild()["steps"]]
    assert order[:2] == ["test", "bundle"]
    assert "waitFor" not in steps["test"] or steps["test"]["waitFor"] == ["-"]
    assert steps["bundle"]["waitFor"] == ["test"]
    for first in ("deploy-memory", "deploy-reconcile", "deploy-ingest"):
        assert steps[first]["waitFor"] == ["bundle"], first  # these two run in parallel
    for later in ("deploy-webhook", "deploy-agent"):
        assert set(steps[later]["waitFor"]) == {"deploy-memory", "deploy-reconcile"}, later
    assert set(steps["smoke"]["waitFor"]) >= {"deploy-webhook"}
    assert order.index("smoke") == len(order) - 1


def test_cloudbuild_urls_read_back_and_never_empty():
    steps = _steps()
    for fn in ("memory", "reconcile"):
        script = "\n".join(steps[f"deploy-{fn}"]["args"])
        assert f"gcloud functions describe {fn}" in script and f"/workspace/urls/{fn}" in script
    flags = _deploy_flags()
    webhook_env = _env_pairs(flags["webhook"]["--set-env-vars"])
    assert webhook_env["MEMORY_FUNCTION_URL"] == "$$memory_url"
    assert webhook_env["RECONCILE_FUNCTION_URL"] == "$$reconcile_url"
    script = "\n".join(steps["deploy-webhook"]["args"])
    assert 'memory_url="$$(cat /workspace/urls/memory)"' in script
    assert 'test -n "$$memory_url" && test -n "$$reconcile_url"' in script
    # Each private function knows its own URL: the audience its callers' OIDC tokens carry.
    assert _env_pairs(flags["memory"]["--set-env-vars"])["MEMORY_FUNCTION_URL"] == "$$url"
    assert _env_pairs(flags["reconcile"]["--set-env-vars"])["RECONCILE_FUNCTION_URL"] == "$$url"
    assert _env_pairs(flags["agent"]["--set-env-vars"])["AGENT_FUNCTION_URL"] == "$$url"
    # The webhook and reconcile (its sweep) queue events for the agent at its deterministic URL,
    # which the agent's step checks against the URL read back.
    agent_url = "https://${_REGION}-${PROJECT_ID}.cloudfunctions.net/agent"
    assert webhook_env["AGENT_FUNCTION_URL"] == agent_url
    assert _env_pairs(flags["reconcile"]["--set-env-vars"])["AGENT_FUNCTION_URL"] == agent_url


def test_cloudbuild_env_names_known_to_config_and_secrets_not_inline():
    known = config_env_names()
    secret_envs = set(locals_()["secrets"])
    for fn, flags in _deploy_flags().items():
        env = _env_pairs(flags["--set-env-vars"])
        secrets = _env_pairs(flags["--set-secrets"])
        assert set(env) <= known, (fn, set(env) - known)
        assert set(secrets) <= known & secret_envs, fn
        assert not set(env) & secret_envs, f"{fn} passes a secret as a plain env var"
        for ref in secrets.values():
            assert not ref.endswith(":latest")
            assert re.fullmatch(r"[a-z-]+:\$\{_SECRET_VERSION_[A-Z_]+\}", ref), ref
    assert ":latest" not in _text() and "versions/latest" not in _text()


def test_cloudbuild_flags_public_webhook_private_others():
    flags = _deploy_flags()
    assert set(flags) == set(locals_()["functions"]), "every function in infra/ has a deploy step"
    for fn, f in flags.items():
        assert "--gen2" in f and f["--runtime"] == "python311" and f["--region"] == "${_REGION}", fn
        assert f["--source"] == f"dist/{fn}" and f["--entry-point"] == fn, fn
        assert f["--service-account"] == f"local-{fn}@${{PROJECT_ID}}.iam.gserviceaccount.com", fn
        assert "--ingress-settings" in f, fn
        public = locals_()["functions"][fn]["public"]
        assert ("--allow-unauthenticated" in f) == public, fn
        assert ("--no-allow-unauthenticated" in f) == (not public), fn
    assert flags["webhook"]["--min-instances"] == "1"
    assert flags["reconcile"]["--ingress-settings"] == "internal-only"
    assert flags["ingest"]["--ingress-settings"] == "internal-only"


def test_cloudbuild_reconcile_gets_the_queues_max_attempts():
    for fn in ("reconcile", "agent"):
        env = _env_pairs(_deploy_flags()[fn]["--set-env-vars"])
        assert env["LOCAL_QUEUE_MAX_ATTEMPTS"] == "${_QUEUE_MAX_ATTEMPTS}", fn
    default = cloudbuild()["substitutions"]["_QUEUE_MAX_ATTEMPTS"]
    assert int(default) == variables()["queue_max_attempts"]["default"] == Settings.from_env({}).queue_max_attempts


def test_cloudbuild_task_dispatch_deadline_fits_every_task_target_timeout():
    deadline = Settings.from_env({}).queue_dispatch_deadline_seconds
    assert 15 <= deadline <= 1800  # Cloud Tasks HTTP tasks: 15 s to 30 min
    assert cloudbuild()["substitutions"]["_QUEUE_DISPATCH_DEADLINE"] == str(int(deadline))
    for fn in ("reconcile", "agent"):  # the queues' targets
        flags = _deploy_flags()[fn]
        assert deadline < int(flags["--timeout"].rstrip("s")), fn
        assert _env_pairs(flags["--set-env-vars"])["LOCAL_QUEUE_DISPATCH_DEADLINE_SECONDS"] == "${_QUEUE_DISPATCH_DEADLINE}"


def test_cloudbuild_smoke_posts_a_signed_empty_verify_body():
    smoke = _steps()["smoke"]
    script = "\n".join(smoke["args"])
    assert smoke["secretEnv"] == ["LINE_CHANNEL_SECRET"]
    assert '"events":[]' in script and "X-Line-Signature" in script and 'test "$$status" = 200' in script
    available = cloudbuild()["availableSecrets"]["secretManager"]
    assert [s["env"] for s in available] == ["LINE_CHANNEL_SECRET"]
    assert available[0]["versionName"].endswith("/versions/${_SECRET_VERSION_LINE_SECRET}")


def test_cloudbuild_has_an_explicit_timeout_and_logging():
    assert re.fullmatch(r"\d+s", cloudbuild()["timeout"])
    assert cloudbuild()["options"]["logging"] == "CLOUD_LOGGING_ONLY"  # a user-chosen build account
