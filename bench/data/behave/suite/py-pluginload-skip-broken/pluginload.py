"""Discovery and loading of report-generator plugins.

A plugin is an importable module.  It may define ``PLUGIN_NAME`` (the name it is
registered under, default: the module name), ``PRIORITY`` (lower runs first,
default 100) and a ``render(report)`` function.
"""

import importlib
import logging
import os

logger = logging.getLogger(__name__)

DEFAULT_PRIORITY = 100
ENV_VAR = "REPORT_PLUGINS"


class PluginRegistry:
    def __init__(self):
        self._plugins = {}

    def register(self, module_name, module):
        name = getattr(module, "PLUGIN_NAME", module_name)
        if name in self._plugins:
            logger.warning("plugin %s registered twice; keeping the first", name)
            return
        self._plugins[name] = module

    def names(self):
        return sorted(self._plugins, key=lambda n: (self.priority(n), n))

    def priority(self, name):
        return getattr(self._plugins[name], "PRIORITY", DEFAULT_PRIORITY)

    def get(self, name):
        return self._plugins[name]

    def __contains__(self, name):
        return name in self._plugins

    def __len__(self):
        return len(self._plugins)


def plugin_names_from_env(environ=None):
    """The module names listed, comma-separated, in $REPORT_PLUGINS."""
    environ = os.environ if environ is None else environ
    raw = environ.get(ENV_VAR, "")
    return [part.strip() for part in raw.split(",") if part.strip()]


def load_plugins(names, registry=None):
    """Import each module of ``names`` and register it; return the registry."""
    registry = PluginRegistry() if registry is None else registry
    for module_name in names:
        module = importlib.import_module(module_name)
        registry.register(module_name, module)
        logger.debug("loaded plugin %s", module_name)
    return registry


def render_all(registry, report):
    """The output of every plugin that can render, in priority order."""
    out = []
    for name in registry.names():
        render = getattr(registry.get(name), "render", None)
        if render is None:
            continue
        out.append((name, render(report)))
    return out
