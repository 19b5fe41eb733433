"""The terminal app's settings: one frozen dataclass, turned into the shared option objects.

Contract: :class:`TuiSettings` holds every knob the settings screen edits (model, draft
model, speculation, k, temperature, exact mode) and builds the same option objects the
CLI does: :meth:`TuiSettings.options` the ``RewriteOptions`` passed to
``app.rewrite.rewrite``, :meth:`TuiSettings.load_config` the ``LoadConfig`` passed to
``app.session.load_session``; the defaults stay in ``app.options``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...engine.sampling import SamplingParams
from ..options import LoadConfig, RewriteOptions


@dataclass(frozen=True)
class TuiSettings:
    """What the user chose in the settings screen."""

    model: str = LoadConfig.model
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
    n_ctx: int = LoadConfig.n_ctx
    """Context length the model is loaded with."""
    backend: str = LoadConfig.backend
    """llama.cpp, torch or auto (``LoadConfig.backend``)."""
    gpu_layers: int | str = LoadConfig.gpu_layers
    """llama.cpp layers offloaded to a GPU: a number, all or auto."""
    device: str | None = LoadConfig.device
    """Torch device; None picks CUDA when present."""

    @classmethod
    def from_load_config(cls, cfg: LoadConfig) -> TuiSettings:
        """The settings that load ``cfg`` (the command line's flags), decoding defaults."""
        return cls(
            model=cfg.model,
            draft_model=cfg.draft_model,
            backend=cfg.backend,
            gpu_layers=cfg.gpu_layers,
            device=cfg.device,
            n_ctx=cfg.n_ctx,
        )

    def load_config(self, model: str | None = None) -> LoadConfig:
        """How to load ``model`` (default: the chosen one) under these settings."""
        return LoadConfig(
            model=model or self.model,
            backend=self.backend,
            device=self.device,
            gpu_layers=self.gpu_layers,
            n_ctx=self.n_ctx,
            draft_model=self.draft_model,
        )

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
