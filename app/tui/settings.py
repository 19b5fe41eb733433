"""The terminal app's settings: one frozen dataclass, turned into ``RewriteOptions``.

Contract: :class:`TuiSettings` holds every knob the settings screen edits (model, draft
model, speculation, k, temperature, exact mode) and :meth:`TuiSettings.options` builds the
``RewriteOptions`` that the app passes to ``app.rewrite.rewrite``, the same function the
CLI uses; the defaults of decoding stay in ``RewriteOptions``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...engine.sampling import SamplingParams
from ...models.catalog import DEFAULT_MODEL
from ..rewrite import RewriteOptions


@dataclass(frozen=True)
class TuiSettings:
    """What the user chose in the settings screen."""

    model: str = DEFAULT_MODEL
    """Catalog name or GGUF path of the target model."""
    draft_model: str | None = None
    """A small model (catalog name or GGUF path) loaded beside the target to propose
    drafts too; None drafts by prompt lookup only."""
    speculation: bool = True
    """Speculation on (``draft='auto'``: prompt lookup, plus the draft model when one is
    loaded) or plain decoding (``'none'``), for a live A/B of tokens/s."""
    k: int | None = None
    """Draft length; None lets the engine adapt it."""
    temperature: float = 0.0
    """0 is greedy decoding."""
    exact: bool = False
    """Verify in sub-blocks whose numerics equal 1-token decoding."""
    n_ctx: int = 16384
    """Context length the model is loaded with."""

    def options(
        self,
        instruction: str,
        *,
        context: tuple[tuple[str, str], ...] = (),
        region: tuple[int, int] | None = None,
    ) -> RewriteOptions:
        """The rewrite options for ``instruction`` under these settings."""
        return RewriteOptions(
            instruction=instruction,
            draft="auto" if self.speculation else "none",
            k=self.k,
            sampling=SamplingParams(temperature=self.temperature),
            exact=self.exact,
            context=context,
            region=region,
        )

    def with_(self, **changes: object) -> TuiSettings:
        return replace(self, **changes)
