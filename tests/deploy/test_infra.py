"""infra/*.tf, parsed with python-hcl2 (Terraform and its provider cannot be fetched here), against
shared/config.py, cloudbuild.yaml and infra/README.md's role table; and checkov over infra/."""
from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

from shared.config import Settings
from tests.deploy.deploy_support import (
    INFRA,
    REPO,
    all_resources,
    cloudbuild,
    config_env_names,
    deploy_scripts,
    function_names,
    hcl_text,
    invoker_grants,
    locals_,
    outputs,
    resources,
    tf,
    unquote,
    variables,
)


def _default(name: str):
    return variables()[name]["default"]


def _secret_env_to_id() -> dict[str, str]:
    return locals_()["secrets"]


# --- queue ------------------------------------------------------------------------------------

def test_infra_queue_defaults_equal_config_and_cloudbuild():
    settings = Settings.from_env({})
    subs = cloudbuild()["substitutions"]
    expected = {
        "queue_name": (settings.queue_name, "_QUEUE_NAME"),
        "queue_max_attempts": (settings.queue_max_attempts, "_QUEUE_MAX_ATTEMPTS"),
        "queue_min_backoff_seconds": (settings.queue_min_backoff_seconds, "_QUEUE_MIN_BACKOFF_SECONDS"),
        "queue_max_backoff_seconds": (settings.queue_max_backoff_seconds, "_QUEUE_MAX_BACKOFF_SECONDS"),
        "queue_max_doublings": (settings.queue_max_doublings, "_QUEUE_MAX_DOUBLINGS"),
        "queue_dispatch_deadline_seconds": (settings.queue_dispatch_deadline_seconds, "_QUEUE_DISPATCH_DEADLINE"),
        "agent_queue_name": (settings.agent_queue_name, "_AGENT_QUEUE_NAME"),
    }
    for var, (config_value, substitution) in expected.items():
        assert _default(var) == config_value, var
        assert type(config_value)(subs[substitution]) == config_value, substitution
    # The trigger hands the same variables to the build.
    trigger = resources("google_cloudbuild_trigger")["deploy"]["substitutions"]
    for var, (_, substitution) in expected.items():
        assert var in trigger[substitution], substitution


def test_infra_queue_retry_config_reads_the_variables():
    queue = resources("google_cloud_tasks_queue")["queue"]
    assert queue["for_each"] == "local.queues" and queue["name"] == "each.value"
    assert locals_()["queues"] == {"reconcile": "var.queue_name", "events": "var.agent_queue_name"}
    retry = queue["retry_config"][0] if isinstance(queue["retry_config"], list) else queue["retry_config"]
    assert retry["max_attempts"] == "var.queue_max_attempts"
    assert retry["max_doublings"] == "var.queue_max_doublings"
    assert retry["min_backoff"] == "${var.queue_min_backoff_seconds}s"
    assert retry["max_backoff"] == "${var.queue_max_backoff_seconds}s"
    # min x 2^retries capped at max (the embedded queue's rule) needs enough doublings to reach max.
    settings = Settings.from_env({})
    doublings_needed = 0
    while settings.queue_min_backoff_seconds * 2 ** doublings_needed < settings.queue_max_backoff_seconds:
        doublings_needed += 1
    assert _default("queue_max_doublings") >= doublings_needed
    assert retry["max_retry_duration"] == "0s"  # attempts, not time, end a task


def test_infra_queue_path_output_matches_cloudbuild_queue_path():
    path = locals_()["queue_path"]
    assert path == "projects/${var.project_id}/locations/${var.region}/queues/${var.queue_name}"
    assert outputs()["queue_path"]["value"] == "local.queue_path"
    steps = "\n".join(str(s.get("args")) for s in cloudbuild()["steps"])
    assert "LOCAL_TASKS_QUEUE_PATH=projects/${PROJECT_ID}/locations/${_REGION}/queues/${_QUEUE_NAME}" in steps
    assert locals_()["agent_queue_path"].endswith("/queues/${var.agent_queue_name}")
    assert ("LOCAL_AGENT_TASKS_QUEUE_PATH=projects/${PROJECT_ID}/locations/${_REGION}/queues/${_AGENT_QUEUE_NAME}"
            in steps)


# --- functions, secrets, outputs ---------------------------------------------------------------

def test_infra_every_function_has_an_entry_and_a_url_output():
    declared = set(locals_()["functions"])
    assert set(function_names()) <= declared, "every functions/<name> needs infra/main.tf local.functions"
    assert outputs()["function_urls"]["value"] == "local.function_urls"
    urls = locals_()["function_urls"]
    assert "cloudfunctions.net" in urls and "local.functions" in urls
    assert set(outputs()) >= {"function_urls", "webhook_url", "queue_path", "tasks_service_account"}


def test_infra_secrets_are_config_variables_pinned_in_cloudbuild():
    env_names = config_env_names()
    mapping = _secret_env_to_id()
    for env, secret_id in mapping.items():
        assert env in env_names, f"{env} is not read by shared/config.py"
        assert secret_id == env.lower().replace("_", "-")
    # Each function's secrets in cloudbuild.yaml are exactly its secrets in infra, at pinned versions.
    declared = locals_()["functions"]
    for fn, flags in _deploy_flags().items():
        pairs = dict(item.split("=", 1) for item in flags["--set-secrets"].split(","))
        assert set(pairs) == set(declared[fn]["secrets"]), fn
        for env, ref in pairs.items():
            secret_id, _, version = ref.partition(":")
            assert secret_id == mapping[env], (fn, env)
            assert re.fullmatch(r"\$\{_SECRET_VERSION_[A-Z_]+\}", version), (fn, env, version)
    assert set(resources("google_secret_manager_secret")["secret"]["for_each"].split("(")[-1].rstrip(")").split(
        ".")) >= {"secrets"}


def test_infra_no_secret_value_committed():
    kinds = {kind for kind, _, _ in all_resources()}
    assert "google_secret_manager_secret_version" not in kinds, "secret values are added by hand, never declared"
    text = "\n".join(p.read_text() for p in sorted(INFRA.glob("*.tf"))) + (REPO / "cloudbuild.yaml").read_text()
    assert "secret_data" not in text
    from tests.conftest import TEST_SECRET, TEST_TOKEN

    for value in (TEST_SECRET, TEST_TOKEN, "local-dev-channel-secret", "local-dev-access-token"):
        assert value not in text
    # No opaque token: LINE access tokens are ~170 base64 characters, channel secrets 32 hex
    # digits, Gemini API keys start with AIza.
    assert not re.search(r"[A-Za-z0-9+/]{40,}", text)
    assert not re.search(r"\b[0-9a-f]{32}\b", text)
    assert not re.search(r"AIza[0-9A-Za-z_-]{20,}", text)
    assert ":latest" not in text and "versions/latest" not in text


# --- IAM ---------------------------------------------------------------------------------------

def _each_items(for_each: str | None) -> list[tuple[str, object]]:
    """The (each.key, each.value) pairs of a for_each expression used in infra/ (None: one pass)."""
    fns = locals_()["functions"]
    if for_each is None:
        return [("", None)]
    if for_each == "local.functions":
        return list(fns.items())
    if for_each == "toset(local.enqueuers)":
        return [(fn, fn) for fn, cfg in fns.items() if cfg["enqueues"]]
    if for_each == "local.enqueuer_grants":
        return [(f"{fn}/{q}", {"function": fn, "queue": q}) for fn, cfg in fns.items() if cfg["enqueues"]
                for q in locals_()["queues"]]
    if for_each == "local.build_project_roles":
        return list(locals_()["build_project_roles"].items())
    if for_each == "local.secret_grants":
        return [(f"{fn}/{env}", {"function": fn, "secret_id": _secret_env_to_id()[env]})
                for fn, cfg in fns.items() for env in cfg["secrets"]]
    raise AssertionError(f"test does not know the for_each {for_each!r}: teach _each_items")


def _member_account(member: str, key: str, value) -> str:
    """Service account id (``local-…``) named by a member expression for one each."""
    body = member.removeprefix("serviceAccount:${").removesuffix("}")
    if body == "google_service_account.build.email":
        return "local-build"
    if body == "google_service_account.tasks.email":
        return "local-tasks"
    if body == "google_service_account.functions_build.email":
        return "local-functions-build"
    if body == "local.build_accounts[each.value.account]":
        return _member_account("serviceAccount:${" + locals_()["build_accounts"][value["account"]] + "}", key, value)
    m = re.fullmatch(r"google_service_account\.function\[each\.(key|value|value\.function)\]\.email", body)
    if m:
        return "local-" + {"key": key, "value": value, "value.function": getattr(value, "get", lambda _: None)(
            "function")}[m.group(1)]
    m = re.fullmatch(r'each\.value\.caller == "tasks" \? google_service_account\.tasks\.email : '
                     r"google_service_account\.function\[each\.value\.caller\]\.email", body)
    if m:
        return "local-tasks" if value["caller"] == "tasks" else f"local-{value['caller']}"
    raise AssertionError(f"test does not know the member {member!r}")


def _target(kind: str, body: dict, value) -> str:
    """What a grant is on, in the README's words."""
    if kind == "google_project_iam_member":
        return "project"
    if kind == "google_secret_manager_secret_iam_member":
        ref = body["secret_id"]
        m = re.search(r'secret\["([^"]+)"\]|secret\[each\.value\.secret_id\]', ref)
        return m.group(1) if m and m.group(1) else value["secret_id"]
    if kind == "google_service_account_iam_member":
        sa = body["service_account_id"]
        return {"google_service_account.tasks.name": "local-tasks",
                "google_service_account.functions_build.name": "local-functions-build"}.get(sa, "function accounts")
    if kind == "google_storage_bucket_iam_member":
        return "bucket"
    if kind == "google_cloud_tasks_queue_iam_member":
        return "queue"
    if kind == "google_artifact_registry_repository_iam_member":
        return "repository"
    raise AssertionError(kind)


def _tf_grants() -> dict[str, set[tuple[str, str]]]:
    """``{account: {(role, target)}}`` of every grant: Terraform's, and the run.invoker grants that
    cloudbuild.yaml makes after each deploy."""
    grants: dict[str, set[tuple[str, str]]] = {}
    for kind, _name, body in all_resources():
        if "role" not in body or "member" not in body:
            continue
        for key, value in _each_items(body.get("for_each")):
            account = _member_account(body["member"], key, value)
            role = value["role"] if body["role"] == "each.value.role" else body["role"]
            grants.setdefault(account, set()).add((role, _target(kind, body, value)))
    for fn, accounts in invoker_grants().items():
        for account in accounts:
            grants.setdefault(account, set()).add(("roles/run.invoker", fn))
    return grants


def _readme_grants() -> dict[str, set[str]]:
    rows = re.findall(r"^\| `(local-[a-z-]+)` \| (.+) \|$", (INFRA / "README.md").read_text(), re.M)
    assert rows, "infra/README.md lost its role table"
    return {account: set(re.findall(r"roles/[A-Za-z.]+", cell)) for account, cell in rows}


def test_infra_each_service_account_has_only_the_readme_roles():
    tf_roles = {account: {role for role, _ in pairs} for account, pairs in _tf_grants().items()}
    readme = _readme_grants()
    assert tf_roles == {account: roles for account, roles in readme.items() if account in tf_roles}
    assert set(readme) - set(tf_roles) == set(), "README lists an account with no grant"
    function_accounts = {f"local-{fn}" for fn in locals_()["functions"]}
    assert function_accounts <= set(tf_roles)


def test_infra_secret_accessor_only_on_each_functions_own_secrets():
    grants = _tf_grants()
    readme = (INFRA / "README.md").read_text()
    for fn, cfg in locals_()["functions"].items():
        expected = {_secret_env_to_id()[env] for env in cfg["secrets"]}
        got = {target for role, target in grants[f"local-{fn}"] if role == "roles/secretmanager.secretAccessor"}
        assert got == expected, fn
        row = re.search(rf"^\| `local-{fn}` \| (.+) \|$", readme, re.M).group(1)
        cell = re.search(r"secretAccessor` \(on ([^)]*)\)", row).group(1)
        assert set(re.findall(r"`([a-z-]+)`", cell)) == expected, fn


def test_infra_run_invoker_only_on_private_functions_for_their_callers():
    fns = locals_()["functions"]
    accounts = {caller: "local-tasks" if caller == "tasks" else f"local-{caller}"
                for cfg in fns.values() for caller in cfg["invokers"]}
    assert invoker_grants() == {fn: {accounts[c] for c in cfg["invokers"]} for fn, cfg in fns.items() if cfg["invokers"]}
    assert all(not fns[fn]["public"] for fn in invoker_grants())
    assert [fn for fn, cfg in fns.items() if cfg["public"]] == ["webhook"]
    # No project-wide invoker, no public binding declared in Terraform.
    for _kind, _name, body in all_resources():
        assert body.get("role") != "roles/run.invoker"
        assert "allUsers" not in str(body.get("member", ""))


def test_infra_invoker_grants_need_no_second_apply():
    # Terraform manages no IAM on the functions' Cloud Run services (they do not exist before the
    # first deploy); each grant is made by the step that deploys its function, after the deploy.
    kinds = {kind for kind, _, _ in all_resources()}
    assert not {k for k in kinds if k.startswith(("google_cloud_run", "google_cloudfunctions"))}
    for _kind, _name, body in all_resources():
        for key in ("for_each", "count"):
            assert "deployed" not in str(body.get(key, "")), body.get(key)
    assert not [v for v in variables() if "deployed" in v]
    # An upgraded deployment's old bindings are forgotten by Terraform, not revoked.
    [removed] = [unquote(block) for block in tf().get("removed", [])]
    assert removed["from"] == "google_cloud_run_v2_service_iam_member.invoker"
    assert removed["lifecycle"][0]["destroy"] is False
    for fn, script in deploy_scripts().items():
        deploy = script.index(f"gcloud functions deploy {fn} ")
        for grant in re.finditer(r"gcloud functions add-invoker-policy-binding", script):
            assert grant.start() > deploy, f"deploy-{fn} grants before its function exists"
    # The runbook has one apply, before the build, and no second one.
    for doc in (INFRA / "README.md", REPO / "docs" / "deploy.md"):
        text = doc.read_text()
        assert "functions_deployed" not in text and "second pass" not in text.lower(), doc.name
    text = (REPO / "docs" / "deploy.md").read_text()
    steps = text[text.index("## Steps"):text.index("### Rotating a secret")]
    assert steps.count("terraform apply") == 1
    assert steps.index("terraform apply") < steps.index("gcloud builds submit")


def test_infra_private_callers_are_granted_before_their_callers_deploy():
    # memory's callers (webhook, agent) deploy after the step that grants them memory's invoker.
    steps = {step["id"]: step for step in cloudbuild()["steps"]}
    assert invoker_grants()["memory"] == {"local-webhook", "local-agent"}
    for fn, accounts in invoker_grants().items():
        for account in accounts:
            caller = account.removeprefix("local-")
            if f"deploy-{caller}" in steps:
                assert f"deploy-{fn}" in steps[f"deploy-{caller}"]["waitFor"], (fn, caller)


# --- APIs --------------------------------------------------------------------------------------

#: The API each resource type needs (Google provider resource → the service it calls). A new type
#: must be added here, with its API enabled in infra/main.tf.
RESOURCE_API = {
    "google_project_service": "serviceusage.googleapis.com",
    "google_project_iam_member": "cloudresourcemanager.googleapis.com",
    "google_service_account": "iam.googleapis.com",
    "google_service_account_iam_member": "iam.googleapis.com",
    "google_artifact_registry_repository": "artifactregistry.googleapis.com",
    "google_artifact_registry_repository_iam_member": "artifactregistry.googleapis.com",
    "google_cloudbuild_trigger": "cloudbuild.googleapis.com",
    "google_storage_bucket": "storage.googleapis.com",
    "google_storage_bucket_iam_member": "storage.googleapis.com",
    "google_secret_manager_secret": "secretmanager.googleapis.com",
    "google_secret_manager_secret_iam_member": "secretmanager.googleapis.com",
    "google_firestore_database": "firestore.googleapis.com",
    "google_firestore_index": "firestore.googleapis.com",
    "google_firestore_field": "firestore.googleapis.com",
    "google_cloud_tasks_queue": "cloudtasks.googleapis.com",
    "google_cloud_tasks_queue_iam_member": "cloudtasks.googleapis.com",
    "google_cloud_scheduler_job": "cloudscheduler.googleapis.com",
    "google_logging_metric": "logging.googleapis.com",
    "google_monitoring_alert_policy": "monitoring.googleapis.com",
    "google_monitoring_notification_channel": "monitoring.googleapis.com",
    "google_monitoring_dashboard": "monitoring.googleapis.com",
}

#: What the deploy steps call besides: gcloud functions deploy (2nd gen: Cloud Functions, its Cloud
#: Run service, its Cloud Build build, its Artifact Registry image, their logs).
DEPLOY_APIS = {"cloudfunctions.googleapis.com", "run.googleapis.com", "cloudbuild.googleapis.com",
               "artifactregistry.googleapis.com", "logging.googleapis.com"}


def _enabled_apis() -> set[str]:
    body = resources("google_project_service")["apis"]["for_each"]
    return set(re.findall(r"[a-z]+\.googleapis\.com", str(body)))


def test_infra_enables_every_api_its_resources_and_deploys_use():
    needed = set(DEPLOY_APIS)
    for kind, _name, _body in all_resources():
        assert kind in RESOURCE_API, f"teach RESOURCE_API which API {kind} needs"
        needed.add(RESOURCE_API[kind])
    needed.discard("serviceusage.googleapis.com")  # on in every project: it enables the others
    assert needed <= _enabled_apis(), sorted(needed - _enabled_apis())
    assert {"cloudresourcemanager.googleapis.com", "monitoring.googleapis.com"} <= _enabled_apis()


def test_infra_every_resource_waits_for_the_api_enablement():
    for kind, name, body in all_resources():
        if kind == "google_project_service":
            continue
        assert "google_project_service.apis" in body.get("depends_on", []), f"{kind}.{name}"


# --- build service accounts and sources --------------------------------------------------------

def test_infra_functions_build_account_has_exactly_the_build_roles():
    # Cloud Run functions docs, "Custom service account for Cloud Build": logs, images, source.
    assert _tf_grants()["local-functions-build"] == {("roles/logging.logWriter", "project"),
                                                     ("roles/artifactregistry.writer", "repository"),
                                                     ("roles/storage.objectViewer", "project")}
    source = resources("google_project_iam_member")["functions_build_source"]
    assert "condition" not in resources("google_project_iam_member")["build"]
    condition = source["condition"][0] if isinstance(source["condition"], list) else source["condition"]
    expression = hcl_text(condition["expression"])
    prefixes = re.findall(r'resource\.name\.startsWith\("([^"]+)"\)', expression)
    assert sorted(prefixes) == ["projects/_/buckets/gcf-v2-sources-", "projects/_/buckets/gcf-v2-uploads-"]
    assert set(re.sub(r'resource\.name\.startsWith\("[^"]+"\)', "", expression).split()) == {"||"}
    writer = resources("google_artifact_registry_repository_iam_member")["functions_build_writer"]
    assert writer["repository"] == "google_artifact_registry_repository.functions.name"
    # The deployer may deploy with it (actAs), and nothing else may.
    assert ("roles/iam.serviceAccountUser", "local-functions-build") in _tf_grants()["local-build"]
    assert outputs()["functions_build_service_account"]["value"] == "google_service_account.functions_build.id"


def test_infra_trigger_and_manual_builds_can_read_their_source():
    trigger = resources("google_cloudbuild_trigger")["deploy"]
    assert trigger["service_account"] == "google_service_account.build.id" and "github" in trigger
    bucket = resources("google_storage_bucket")["build_source"]
    assert bucket["uniform_bucket_level_access"] is True and bucket["public_access_prevention"] == "enforced"
    reader = resources("google_storage_bucket_iam_member")["build_reads_source"]
    assert reader["bucket"] == "google_storage_bucket.build_source.name"
    assert reader["role"] == "roles/storage.objectViewer"
    assert _member_account(reader["member"], "", None) == "local-build"
    staging = outputs()["build_source_staging_dir"]["value"]
    assert staging == "gs://${google_storage_bucket.build_source.name}/source"
    manual = re.search(r"gcloud builds submit[^`]*?(?=\n\s*```)", (REPO / "docs" / "deploy.md").read_text(), re.S).group(0)
    assert '--gcs-source-staging-dir="$(terraform -chdir=infra output -raw build_source_staging_dir)"' in manual
    assert '--service-account="$(terraform -chdir=infra output -raw build_service_account)"' in manual


def test_infra_image_cleanup_policy_deletes_old_images_and_keeps_recent_ones():
    repo = resources("google_artifact_registry_repository")["functions"]
    assert repo.get("cleanup_policy_dry_run") is False
    policies = {p["action"]: p for p in repo["cleanup_policies"]}
    delete = policies["DELETE"]["condition"]
    delete = delete[0] if isinstance(delete, list) else delete
    assert delete["tag_state"] == "ANY" and re.fullmatch(r"\d+s", delete["older_than"])
    keep = policies["KEEP"]["most_recent_versions"]
    keep = keep[0] if isinstance(keep, list) else keep
    assert keep["keep_count"] >= 2  # the serving revision's image and the one before it


def test_infra_enqueuers_act_as_the_tasks_invoker_only():
    grants = _tf_grants()
    for fn, cfg in locals_()["functions"].items():
        roles = grants[f"local-{fn}"]
        assert (("roles/cloudtasks.enqueuer", "queue") in roles) == cfg["enqueues"], fn
        assert (("roles/iam.serviceAccountUser", "local-tasks") in roles) == cfg["enqueues"], fn


# --- Firestore ---------------------------------------------------------------------------------

#: Modules that write ``expire_at`` and the collection each writes it to. A new writer must be
#: added here, and then the TTL test below fails until infra/firestore.tf declares its policy.
EXPIRE_AT_WRITERS = {
    "shared/inbox.py": "webhook_inbox",
    "shared/audit.py": "turn_audit",
    "shared/memory/approve.py": "memory_cards",
    "shared/memory/store.py": "memory_cards",
    "shared/conversation_store.py": "conversations",
}


def test_infra_ttl_declared_for_every_collection_with_expire_at():
    writers = {str(p.relative_to(REPO)) for p in (REPO / "shared").rglob("*.py")
               if '"expire_at"' in p.read_text() and p.parent.name != "store"}  # store/: the port names it
    unknown = writers - set(EXPIRE_AT_WRITERS)
    assert not unknown, f"add these expire_at writers to EXPIRE_AT_WRITERS: {sorted(unknown)}"
    ttl = resources("google_firestore_field")["ttl"]
    assert ttl["field"] == "expire_at" and "ttl_config" in ttl
    assert ttl["for_each"] == "toset(local.ttl_collections)"
    assert set(locals_()["ttl_collections"]) == set(EXPIRE_AT_WRITERS.values())


@dataclass(frozen=True)
class StoreQuery:
    """One ``store.query(...)`` call: where it is, its collection (None when not a constant), the
    fields of its equality filters, and its order (``(field, "ASCENDING" | "DESCENDING")`` or None)."""

    where: str
    collection: str | None
    equals: tuple[str, ...]
    order: tuple[str, str] | None


def _constant(node: ast.expr | None, module: str) -> object:
    """The value of a literal or of a module-level name (``records.OPERATIONS``); raises on others."""
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return eval(ast.unparse(node), vars(importlib.import_module(module)))  # noqa: S307 - repo constants only


def store_queries() -> list[StoreQuery]:
    """Every ``.query(collection, where={...}, order_by=..., descending=...)`` call in shared/, functions/
    and tools/ (the store adapters themselves excepted), read from the source with ``ast``."""
    found = []
    for path in sorted([*REPO.glob("shared/**/*.py"), *REPO.glob("functions/*/main.py"), *REPO.glob("tools/*.py")]):
        rel = path.relative_to(REPO)
        if rel.parts[:2] == ("shared", "store"):
            continue
        module = ".".join(rel.with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "query"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            where = kw.get("where")
            assert where is None or isinstance(where, ast.Dict), f"{rel}:{node.lineno}: where= must be a dict literal"
            equals = tuple(_constant(k, module) for k in where.keys) if where is not None else ()
            order_field = _constant(kw.get("order_by"), module)
            descending = _constant(kw.get("descending"), module)
            try:
                collection = _constant(node.args[0], module) if node.args else None
            except (NameError, AttributeError):
                collection = None  # a parameter (tools/user_data.py): fine while it orders nothing
            order = (order_field, "DESCENDING" if descending else "ASCENDING") if order_field else None
            found.append(StoreQuery(f"{rel}:{node.lineno}", collection, equals, order))
    return found


def needed_composite_indexes(queries: list[StoreQuery]) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    """``{(collection, ((field, order), ...))}`` that Firestore needs beyond its single-field indexes.

    Equality filters alone are served by merging single-field indexes, and an order alone by the
    field's own single-field index (both directions are kept); equality filters with an order on
    another field need a composite index: the equality fields, then the order field
    (Firestore docs, "Standard edition index overview", "Index types").
    """
    needed = set()
    for q in queries:
        if q.order is None or not set(q.equals) - {q.order[0]}:
            continue
        assert q.collection is not None, f"{q.where}: an ordered query needs a constant collection"
        fields = tuple((f, "ASCENDING") for f in sorted(set(q.equals) - {q.order[0]}))
        needed.add((q.collection, (*fields, q.order)))
    return needed


def test_infra_firestore_declares_exactly_the_composite_indexes_the_queries_need():
    # The rule itself: equality alone or an order alone needs nothing; both need one index.
    eq = StoreQuery("x", "c", ("tenant_id", "state"), None)
    ordered = StoreQuery("x", "c", (), ("at", "DESCENDING"))
    both = StoreQuery("x", "c", ("tenant_id",), ("at", "DESCENDING"))
    assert needed_composite_indexes([eq, ordered]) == set()
    assert needed_composite_indexes([both]) == {("c", (("tenant_id", "ASCENDING"), ("at", "DESCENDING")))}
    db = resources("google_firestore_database")["main"]
    assert db["type"] == "FIRESTORE_NATIVE" and db["name"] == "(default)"
    queries = store_queries()
    assert len(queries) >= 15 and any(q.order for q in queries)  # the scan sees the store's callers
    declared = {(ix["collection"], tuple((f["field"], f["order"]) for f in ix["fields"]))
                for ix in (locals_()["composite_indexes"] or {}).values()}
    assert declared == needed_composite_indexes(queries)
    index = resources("google_firestore_index")["composite"]
    assert index["for_each"] == "local.composite_indexes"


# --- checkov -----------------------------------------------------------------------------------

CHECKOV_VENV = REPO / ".venv-checkov"


@pytest.mark.slow
def test_infra_checkov_reports_no_failed_check():
    checkov = CHECKOV_VENV / "bin" / "checkov"
    if not checkov.exists():
        built = subprocess.run(["make", "checkov-venv"], cwd=REPO, capture_output=True, text=True)
        if built.returncode != 0:
            pytest.fail(f"make checkov-venv failed:\n{built.stderr[-2000:]}")
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false",
           "LOG_LEVEL": "WARNING"}
    run = subprocess.run([str(checkov), "--directory", str(INFRA), "--framework", "terraform",
                          "--quiet", "--compact", "--skip-download", "--output", "cli"],
                         cwd=REPO, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    # Every skip carries its reason on the same line.
    for path in INFRA.glob("*.tf"):
        for line in path.read_text().splitlines():
            if "checkov:skip=" in line:
                assert re.search(r"checkov:skip=CKV\w*_\d+:\s*\S.{10,}", line), f"{path.name}: {line}"


# --- helpers -----------------------------------------------------------------------------------

def _deploy_flags() -> dict[str, dict[str, str]]:
    """``{function: {flag: value}}`` from each deploy step's gcloud command in cloudbuild.yaml."""
    out = {}
    for step in cloudbuild()["steps"]:
        script = "\n".join(step.get("args", [])).replace("\\\n", " ")
        m = re.search(r"^\s*gcloud functions deploy (\w+)(.*)$", script, re.M)
        if not m:
            continue
        flags = {}
        for token in m.group(2).split():
            name, _, value = token.partition("=")
            if name.startswith("--"):
                flags[name] = value
        out[m.group(1)] = flags
    return out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))


def test_infra_scheduler_sweep_posts_reconciles_sweep_body_with_the_invoker_token():
    job = resources("google_cloud_scheduler_job")["sweep"]
    target = job["http_target"][0] if isinstance(job["http_target"], list) else job["http_target"]
    source = (REPO / "functions" / "reconcile" / "main.py").read_text()
    kind = re.search(r'SWEEP_KIND = "([a-z_]+)"', source).group(1)
    assert f'kind = "{kind}"' in target["body"]
    assert target["uri"] == 'local.function_urls["reconcile"]'
    token = target["oidc_token"][0] if isinstance(target["oidc_token"], list) else target["oidc_token"]
    assert token["audience"] == target["uri"]
    assert token["service_account_email"] == "google_service_account.tasks.email"
