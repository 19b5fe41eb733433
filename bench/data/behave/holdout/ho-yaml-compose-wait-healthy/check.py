"""Check for ho-yaml-compose-wait-healthy: transcoder waits for healthy db and minio; nothing else changes."""

import copy
import sys
from pathlib import Path

import yaml

# the parsed original, less services.transcoder.depends_on
REST = {'name': 'podcast',
 'x-app-env': {'DATABASE_URL': 'postgres://podcast:podcast@db:5432/podcast',
               'REDIS_URL': 'redis://redis:6379/0',
               'S3_ENDPOINT': 'http://minio:9000',
               'S3_BUCKET': 'episodes',
               'S3_ACCESS_KEY': 'podcast',
               'S3_SECRET_KEY': 'podcast-secret'},
 'services': {'web': {'build': '.',
                      'command': ['gunicorn',
                                  'podcast.wsgi',
                                  '--bind',
                                  '0.0.0.0:8080',
                                  '--workers',
                                  '3'],
                      'ports': ['8080:8080'],
                      'environment': {'DATABASE_URL': 'postgres://podcast:podcast@db:5432/podcast',
                                      'REDIS_URL': 'redis://redis:6379/0',
                                      'S3_ENDPOINT': 'http://minio:9000',
                                      'S3_BUCKET': 'episodes',
                                      'S3_ACCESS_KEY': 'podcast',
                                      'S3_SECRET_KEY': 'podcast-secret',
                                      'DJANGO_DEBUG': '1'},
                      'depends_on': {'db': {'condition': 'service_healthy'},
                                     'redis': {'condition': 'service_started'}},
                      'restart': 'unless-stopped'},
              'transcoder': {'build': '.',
                             'command': ['python',
                                         '-m',
                                         'podcast.transcoder',
                                         '--concurrency',
                                         '2'],
                             'environment': {'DATABASE_URL': 'postgres://podcast:podcast@db:5432/podcast',
                                             'REDIS_URL': 'redis://redis:6379/0',
                                             'S3_ENDPOINT': 'http://minio:9000',
                                             'S3_BUCKET': 'episodes',
                                             'S3_ACCESS_KEY': 'podcast',
                                             'S3_SECRET_KEY': 'podcast-secret',
                                             'FFMPEG_THREADS': '2'},
                             'volumes': ['scratch:/tmp/transcode'],
                             'restart': 'unless-stopped'},
              'scheduler': {'build': '.',
                            'command': ['python', '-m', 'podcast.scheduler'],
                            'environment': {'DATABASE_URL': 'postgres://podcast:podcast@db:5432/podcast',
                                            'REDIS_URL': 'redis://redis:6379/0',
                                            'S3_ENDPOINT': 'http://minio:9000',
                                            'S3_BUCKET': 'episodes',
                                            'S3_ACCESS_KEY': 'podcast',
                                            'S3_SECRET_KEY': 'podcast-secret'},
                            'depends_on': ['redis'],
                            'restart': 'unless-stopped'},
              'db': {'image': 'postgres:16',
                     'environment': {'POSTGRES_USER': 'podcast',
                                     'POSTGRES_PASSWORD': 'podcast',
                                     'POSTGRES_DB': 'podcast'},
                     'volumes': ['pgdata:/var/lib/postgresql/data'],
                     'healthcheck': {'test': ['CMD-SHELL', 'pg_isready -U podcast -d podcast'],
                                     'interval': '5s',
                                     'timeout': '3s',
                                     'retries': 10}},
              'redis': {'image': 'redis:7-alpine',
                        'command': ['redis-server', '--appendonly', 'yes'],
                        'volumes': ['redisdata:/data']},
              'minio': {'image': 'minio/minio:RELEASE.2024-06-13T22-53-53Z',
                        'command': ['server', '/data', '--console-address', ':9001'],
                        'environment': {'MINIO_ROOT_USER': 'podcast',
                                        'MINIO_ROOT_PASSWORD': 'podcast-secret'},
                        'ports': ['9001:9001'],
                        'volumes': ['miniodata:/data'],
                        'healthcheck': {'test': ['CMD', 'mc', 'ready', 'local'],
                                        'interval': '5s',
                                        'timeout': '3s',
                                        'retries': 10}}},
 'volumes': {'pgdata': None, 'redisdata': None, 'miniodata': None, 'scratch': None}}

HEALTHY = "service_healthy"


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def condition(dep: object) -> object:
    """The condition of a long-form depends_on entry (None when it has none)."""
    if dep is None:
        return None
    return dep.get("condition") if isinstance(dep, dict) else f"not a mapping: {dep!r}"


def main() -> None:
    try:
        data = yaml.safe_load(Path(sys.argv[1]).read_text(encoding="utf-8"))
    except Exception as e:  # noqa: BLE001
        fail(f"not valid YAML: {e}")
    try:
        deps = data["services"]["transcoder"]["depends_on"]
    except (KeyError, TypeError):
        fail("services.transcoder.depends_on is gone")
    if not isinstance(deps, dict):
        fail(f"transcoder's depends_on is not in the long (mapping) form: {deps!r}")
    if set(deps) != {"db", "redis", "minio"}:
        fail(f"transcoder now depends on {sorted(deps)}, not db, redis and minio")
    for name in ("db", "minio"):
        cond = condition(deps[name])
        if cond != HEALTHY:
            fail(f"transcoder's dependency on {name} has condition {cond!r}, not {HEALTHY}")
    if condition(deps["redis"]) not in (None, "service_started"):
        fail(f"transcoder's dependency on redis (no healthcheck) is {deps['redis']!r}")
    rest = copy.deepcopy(data)
    del rest["services"]["transcoder"]["depends_on"]
    if rest != REST:
        services = rest.get("services") or {}
        changed = [k for k in set(REST["services"]) | set(services) if REST["services"].get(k) != services.get(k)]
        fail(f"other settings changed: {', '.join(sorted(changed)) or 'outside services'}")
    print("ok")


main()
