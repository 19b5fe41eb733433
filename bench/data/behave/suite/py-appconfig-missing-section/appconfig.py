"""Application settings read from an INI file plus environment overrides.

Every setting lives in a section; an environment variable named
``APP_<SECTION>_<KEY>`` (upper case) overrides the file's value.
"""

import configparser
import os

ENV_PREFIX = "APP_"
TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off"}


class ConfigError(Exception):
    """A setting is missing or has a value of the wrong shape."""


class Section:
    """The settings of one section, with typed getters."""

    def __init__(self, name, values, environ=None):
        self.name = name
        self._values = dict(values)
        self._environ = os.environ if environ is None else environ

    def _raw(self, key):
        env_key = f"{ENV_PREFIX}{self.name}_{key}".upper()
        if env_key in self._environ:
            return self._environ[env_key]
        return self._values.get(key)

    def get(self, key, default=None):
        value = self._raw(key)
        return default if value is None else value

    def require(self, key):
        value = self._raw(key)
        if value is None:
            raise ConfigError(f"[{self.name}] {key} is required")
        return value

    def get_int(self, key, default=0):
        value = self._raw(key)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise ConfigError(f"[{self.name}] {key} must be an integer, not {value!r}") from None

    def get_bool(self, key, default=False):
        value = self._raw(key)
        if value is None:
            return default
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise ConfigError(f"[{self.name}] {key} must be a yes/no value, not {value!r}")

    def keys(self):
        return sorted(self._values)


class Config:
    """All the sections of one settings file."""

    def __init__(self, parser, environ=None):
        self._parser = parser
        self._environ = environ

    @classmethod
    def from_string(cls, text, environ=None):
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        return cls(parser, environ)

    @classmethod
    def from_file(cls, path, environ=None):
        parser = configparser.ConfigParser(interpolation=None)
        with open(path, encoding="utf-8") as f:
            parser.read_file(f)
        return cls(parser, environ)

    def sections(self):
        return self._parser.sections()

    def has_section(self, name):
        return self._parser.has_section(name)

    def section(self, name):
        """The ``Section`` called ``name``."""
        if not self._parser.has_section(name):
            return None
        return Section(name, self._parser[name], self._environ)

    def database_url(self):
        db = self.section("database")
        host = db.get("host", "localhost")
        port = db.get_int("port", 5432)
        name = db.require("name")
        return f"postgresql://{host}:{port}/{name}"
