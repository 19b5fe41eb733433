#!/bin/sh
# Nightly backup of the inventory database and the uploaded files.
#
# Run by cron on the backup host:
#   15 2 * * * /opt/inventory/bin/backup.sh >> /var/log/inventory/backup.log 2>&1
#
# Each run writes a compressed database dump and a tarball of the uploads into a
# dated folder, checks that both can be read back, copies them to object storage and
# removes local backups older than KEEP_DAYS. It exits non-zero if any step fails, so
# cron mails the log to the operators.

set -eu

BACKUP_ROOT="/var/backups/inventory"
UPLOADS_DIR="/srv/inventory/uploads"
DB_HOST="db.internal.example.com"
DB_NAME="inventory"
DB_USER="backup"
KEEP_DAYS=14
BUCKET="s3://example-inventory-backups"
COMPRESS_LEVEL=6
LOCK_FILE="/run/lock/inventory-backup.lock"

STAMP="$(date -u +%Y-%m-%dT%H%M%SZ)"
TARGET="$BACKUP_ROOT/$STAMP"

log() {
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) backup: $*"
}

fail() {
    log "FAILED: $*"
    exit 1
}

cleanup() {
    rm -f "$LOCK_FILE"
}

# One backup at a time: a slow dump must not overlap the next night's run.
if [ -e "$LOCK_FILE" ]; then
    fail "another backup is running (lock $LOCK_FILE)"
fi
echo $$ > "$LOCK_FILE"
trap cleanup EXIT INT TERM

command -v pg_dump >/dev/null 2>&1 || fail "pg_dump not found"
command -v aws >/dev/null 2>&1 || fail "aws cli not found"
[ -n "${PGPASSWORD:-}" ] || fail "PGPASSWORD is not set"

mkdir -p "$TARGET"
log "writing to $TARGET"

log "dumping database $DB_NAME from $DB_HOST"
pg_dump --host="$DB_HOST" --username="$DB_USER" --format=custom \
    --compress="$COMPRESS_LEVEL" --no-owner --file="$TARGET/$DB_NAME.dump" "$DB_NAME" \
    || fail "pg_dump"

log "checking the dump"
pg_restore --list "$TARGET/$DB_NAME.dump" > /dev/null || fail "the dump cannot be read"

log "archiving $UPLOADS_DIR"
tar -C "$(dirname "$UPLOADS_DIR")" -czf "$TARGET/uploads.tar.gz" "$(basename "$UPLOADS_DIR")" \
    || fail "tar"
tar -tzf "$TARGET/uploads.tar.gz" > /dev/null || fail "the archive cannot be read"

log "writing checksums"
(cd "$TARGET" && sha256sum "$DB_NAME.dump" uploads.tar.gz > SHA256SUMS) || fail "sha256sum"

log "copying to $BUCKET"
aws s3 cp --recursive --only-show-errors "$TARGET" "$BUCKET/$STAMP/" || fail "upload"

log "removing local backups older than $KEEP_DAYS days"
find "$BACKUP_ROOT" -mindepth 1 -maxdepth 1 -type d -mtime +"$KEEP_DAYS" \
    -exec rm -rf {} + || fail "cleanup of old backups"

SIZE="$(du -sh "$TARGET" | cut -f1)"
log "done: $TARGET ($SIZE)"
