"""cloudbuild.yaml, read as data: substitutions, secrets, env names, flags and step order."""
from __future__ import annotations

import re

from shared.config import Settings
from tests.deploy.deploy_support import REPO, cloudbuild, config_env_names, locals_, resources, variables
from tests.deploy.test_infra import _deploy_flags, _tf_grants
from tools import bundle

#: Environment variables the functions' framework reads, not shared/config.py: functions-framework's
#: gunicorn thread count (Cloud Run functions docs, "Concurrency": THREADS equal to the concurrency).
FRAMEWORK_ENV = {"THREADS"}

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


def test_cloudbuild_step_order_checks_bundle_private_then_public_then_smoke():
    steps = _steps()
    order = [s["id"] for s in cloudbuild()["steps"]]
    assert order[:4] == ["lint", "firestore-emulator", "test", "bundle"]
    assert steps["lint"]["waitFor"] == ["-"] and steps["firestore-emulator"]["waitFor"] == ["-"]
    assert set(steps["test"]["waitFor"]) == {"lint", "firestore-emulator"}
    assert steps["bundle"]["waitFor"] == ["test"]
    for first in ("deploy-memory", "deploy-reconcile", "deploy-ingest"):
        assert steps[first]["waitFor"] == ["bundle"], first  # these two run in parallel
    for later in ("deploy-webhook", "deploy-agent"):
        assert set(steps[later]["waitFor"]) == {"deploy-memory", "deploy-reconcile"}, later
    assert set(steps["smoke"]["waitFor"]) >= {"deploy-webhook"}
    assert order[-2:] == ["smoke", "richmenu"]  # the rich menu once the webhook answers


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
        assert set(env) <= known | FRAMEWORK_ENV, (fn, set(env) - known)
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
    available = {s["env"]: s["versionName"] for s in cloudbuild()["availableSecrets"]["secretManager"]}
    assert set(available) == {"LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN"}  # the latter: the rich menu
    assert available["LINE_CHANNEL_SECRET"].endswith("/secrets/line-channel-secret/versions/${_SECRET_VERSION_LINE_SECRET}")


def test_cloudbuild_rich_menu_step_runs_after_every_deploy_with_the_token_from_secret_manager():
    steps = _steps()
    step = steps["richmenu"]
    script = "\n".join(step["args"])
    # After every deploy and the smoke step: the taps it offers go to a webhook that answers.
    assert step["waitFor"] == ["smoke"]
    assert {s for s in steps if s.startswith("deploy-")} | {"smoke", "lint", "test"} <= _waits_for("richmenu")
    assert "set -euo pipefail" in script and script.rstrip().endswith("make richmenu")
    # The token only as a secret: from Secret Manager at its pinned version, never a plain value.
    assert step["secretEnv"] == ["LINE_CHANNEL_ACCESS_TOKEN"]
    [token] = [s for s in cloudbuild()["availableSecrets"]["secretManager"] if s["env"] == "LINE_CHANNEL_ACCESS_TOKEN"]
    assert token["versionName"] == (
        "projects/${PROJECT_ID}/secrets/line-channel-access-token/versions/${_SECRET_VERSION_LINE_TOKEN}")
    assert not [e for e in step.get("env", []) if e.startswith(("LINE_CHANNEL_ACCESS_TOKEN", "LINE_API"))]
    assert "LINE_CHANNEL_ACCESS_TOKEN" not in script  # nor set, printed or passed on the command line
    # LINE's own hosts: no stand-in URL is given, so shared.config's defaults (api.line.me, api-data) apply.
    assert "LINE_API_BASE_URL" not in script and "LINE_API_DATA_BASE_URL" not in script
    # The build account may read that secret (infra/build.tf), and the Makefile target applies the menu.
    grants = _tf_grants()["local-build"]
    assert ("roles/secretmanager.secretAccessor", "line-channel-access-token") in grants
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^richmenu: .*richmenu-font\n\t@\$\(PY\) -m tools\.richmenu ", makefile, re.M)


def test_cloudbuild_has_an_explicit_timeout_and_logging():
    assert re.fullmatch(r"\d+s", cloudbuild()["timeout"])
    assert cloudbuild()["options"]["logging"] == "CLOUD_LOGGING_ONLY"  # a user-chosen build account


# --- checks before any deploy ------------------------------------------------------------------

def _waits_for(step_id: str) -> set[str]:
    """Every step ``step_id`` waits for, directly or not (Cloud Build: a step without ``waitFor``
    waits for all the steps before it; ``["-"]`` for none)."""
    order = [s["id"] for s in cloudbuild()["steps"]]
    steps = _steps()
    direct = steps[step_id].get("waitFor")
    before = order[:order.index(step_id)]
    todo = list(before if direct is None else [d for d in direct if d != "-"])
    seen: set[str] = set()
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(_waits_for(current))
    return seen


def test_cloudbuild_lint_and_the_firestore_suite_run_before_any_deploy():
    steps = _steps()
    assert steps["lint"]["args"] == ["-c", "make lint"]
    script = "\n".join(steps["test"]["args"])
    assert script.rstrip().endswith("make test") and "set -euo pipefail" in script
    # The suite runs against Google's emulator, started in its own container on the build's network.
    emulator = steps["firestore-emulator"]
    assert emulator["name"] == "gcr.io/cloud-builders/docker"
    assert emulator["args"][:4] == ["run", "--detach", "--network=cloudbuild", "--name=firestore-emulator"]
    assert emulator["args"][4] == "${_EMULATOR_IMAGE}"
    assert cloudbuild()["substitutions"]["_EMULATOR_IMAGE"].startswith("gcr.io/google.com/cloudsdktool/google-cloud-cli:")
    assert emulator["args"][5:] == ["gcloud", "emulators", "firestore", "start", "--host-port=0.0.0.0:8080"]
    assert steps["test"]["env"] == ["FIRESTORE_EMULATOR_HOST=firestore-emulator:8080"]
    assert "wait_until_answers('$$FIRESTORE_EMULATOR_HOST'" in script
    # With FIRESTORE_EMULATOR_HOST set the suite's emulator fixture uses it and never skips.
    assert 'host = os.environ.get("FIRESTORE_EMULATOR_HOST")' in (REPO / "tests" / "conftest.py").read_text()
    # A failed check fails the build: every deploy waits for both, and no step may fail quietly.
    for step_id in steps:
        if step_id.startswith("deploy-") or step_id in ("bundle", "smoke"):
            assert {"lint", "test", "firestore-emulator"} <= _waits_for(step_id), step_id
    for step in cloudbuild()["steps"]:
        assert not {"allowFailure", "allowExitCodes"} & set(step), step["id"]


# --- sizes, build account, bytecode ------------------------------------------------------------

def _seconds(value: str) -> int:
    assert re.fullmatch(r"\d+s", value), value
    return int(value[:-1])


def test_cloudbuild_every_function_is_sized_explicitly():
    for fn, f in _deploy_flags().items():
        for flag in ("--cpu", "--memory", "--concurrency", "--min-instances", "--max-instances", "--timeout"):
            assert f.get(flag), (fn, flag)
        concurrency = int(f["--concurrency"])
        # Cloud Run functions docs, "Concurrency": above 1 needs at least 1 vCPU, and Python needs
        # as many threads (functions-framework's THREADS) as concurrent requests.
        assert concurrency == 1 or float(f["--cpu"]) >= 1, fn
        assert _env_pairs(f["--set-env-vars"])["THREADS"] == str(concurrency), fn
        assert 0 <= int(f["--min-instances"]) <= int(f["--max-instances"]), fn
    flags = _deploy_flags()
    assert flags["webhook"]["--min-instances"] == "1"  # LINE's answer budget is shorter than a cold start


def test_cloudbuild_queue_targets_take_every_concurrent_dispatch_and_outlive_their_callers():
    flags = _deploy_flags()
    dispatches = variables()["queue_max_concurrent_dispatches"]["default"]
    for fn in ("reconcile", "agent"):  # the two queues' targets
        capacity = int(flags[fn]["--max-instances"]) * int(flags[fn]["--concurrency"])
        assert capacity >= dispatches, fn
    jobs = resources("google_cloud_scheduler_job")
    for job, fn in (("sweep", "reconcile"), ("ingest", "ingest")):
        assert _seconds(jobs[job]["attempt_deadline"]) <= _seconds(flags[fn]["--timeout"]), job


def test_cloudbuild_sizes_are_the_ones_argued_in_docs_deploy():
    text = (REPO / "docs" / "deploy.md").read_text()
    rows = {m[0]: m[1:] for m in re.findall(
        r"^\| `(\w+)` \| ([\d.]+) \| (\w+) \| (\d+) \| (\d+) \| (\d+) \| (\d+s) \|", text, re.M)}
    assert set(rows) == set(_deploy_flags())
    for fn, f in _deploy_flags().items():
        assert rows[fn] == (f["--cpu"], f["--memory"], f["--concurrency"], f["--min-instances"],
                            f["--max-instances"], f["--timeout"]), fn


def test_cloudbuild_images_are_built_by_their_own_account_with_hash_based_bytecode():
    for fn, f in _deploy_flags().items():
        assert f["--build-service-account"] == (
            "projects/${PROJECT_ID}/serviceAccounts/local-functions-build@${PROJECT_ID}.iam.gserviceaccount.com"), fn
        # With SOURCE_DATE_EPOCH set, compileall's default is checked hash-based pycs (py_compile docs),
        # so the buildpack's own compile of the source writes pycs that the image export keeps valid.
        assert "SOURCE_DATE_EPOCH" in _env_pairs(f["--set-build-env-vars"]), fn
        assert f["--runtime"] == bundle.RUNTIME, fn
    major, minor = bundle.RUNTIME_PYTHON
    assert _steps()["bundle"]["name"] == f"python:{major}.{minor}"  # the pycs are for the runtime's Python
