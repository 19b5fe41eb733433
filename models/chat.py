"""Chat-template rendering shared by every backend.

Contract: ``render_chat(template, messages, bos, eos)`` renders a GGUF/HF jinja2
chat template (sandboxed, the same extensions transformers enables) with
``add_generation_prompt=True`` and returns the prompt text that ends where the
assistant's reply begins. Without a template, ChatML is used.
"""

from __future__ import annotations

import json

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _raise(msg: str):
    raise jinja2.exceptions.TemplateError(msg)


def render_chat(
    template: str | None, messages: list[dict[str, str]], bos: str = "", eos: str = ""
) -> str:
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.BaseLoader(),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = lambda x, indent=None, **_: json.dumps(
        x, ensure_ascii=False, indent=indent
    )
    env.globals["raise_exception"] = _raise
    return env.from_string(template or CHATML).render(
        messages=messages, add_generation_prompt=True, bos_token=bos, eos_token=eos
    )
