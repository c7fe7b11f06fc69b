"""docs/model.md and `kvtrace rules` come from one table and cannot drift apart."""

from __future__ import annotations

import json

from kvtrace.cli import run
from kvtrace.model.rules import RULES
from kvtrace.render.rules_shape import releases_markdown, rules_markdown
from tests.conftest import ROOT


def test_model_doc_embeds_the_generated_rule_table():
    doc = (ROOT / "docs" / "model.md").read_text()
    embedded = doc.split("<!-- rules:begin -->\n", 1)[1].split("<!-- rules:end -->", 1)[0]
    assert embedded == rules_markdown(), (
        "docs/model.md is stale: regenerate with `kvtrace rules -o markdown`"
    )


def test_rules_command_lists_every_rule(capsys):
    assert run(["rules", "-o", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["items"]
    assert [r["id"] for r in listed] == [r.id for r in RULES]
    assert all(r["positions"] and r["sentence"].endswith(".") for r in listed)


def test_rule_ids_are_unique_and_stable_in_shape():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(i.startswith("KV-") and len(i.split("-")) == 3 for i in ids)


def test_model_doc_embeds_the_generated_release_table():
    doc = (ROOT / "docs" / "model.md").read_text()
    embedded = doc.split("<!-- releases:begin -->\n", 1)[1].split("<!-- releases:end -->", 1)[0]
    assert embedded == releases_markdown(), "docs/model.md release table is stale"
