#!/usr/bin/env python3
"""Renders every case of chat_template_cases.json (written by chat_template_oracle.js) with Python's
jinja2 set up as transformers' apply_chat_template sets it up: an ImmutableSandboxedEnvironment
with trim_blocks, lstrip_blocks and loop controls, tojson as json.dumps(ensure_ascii=False),
raise_exception and strftime_now (on the case's fixed clock). Writes the texts, or the message a
template raised, to chat_template_cases_jinja2.json beside the cases, so the oracle test checks
odbatch against the engine transformers itself runs as well as against @huggingface/jinja.
Usage: chat_template_jinja2_oracle.py TEMPLATE_DIR ORACLE_DIR"""
import json
import pathlib
import sys
from datetime import datetime, timezone

try:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.exit("chat template oracle: Python's jinja2 is missing (Debian: apt-get install python3-jinja2)")


class RaisedByTemplate(Exception):
    pass


def environment(clock_epoch_seconds):
    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.fromtimestamp(clock_epoch_seconds, timezone.utc).strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    template_dir, oracle_dir = (pathlib.Path(arg) for arg in sys.argv[1:3])
    cases = json.loads((oracle_dir / "chat_template_cases.json").read_text())["cases"]
    results = []
    for case in cases:
        env = environment(case["clock_epoch_seconds"])
        template = env.from_string((template_dir / case["template"]).read_text())
        result = {"name": case["name"]}
        try:
            result["expected"] = template.render(**case["variables"])
        except RaisedByTemplate as e:
            result["error"] = str(e)
        results.append(result)
    (oracle_dir / "chat_template_cases_jinja2.json").write_text(
        json.dumps({"jinja2_version": jinja2.__version__, "cases": results}, ensure_ascii=False))
    print(f"chat_template_cases_jinja2.json: {len(results)} cases rendered by jinja2 "
          f"{jinja2.__version__}")


if __name__ == "__main__":
    main()
