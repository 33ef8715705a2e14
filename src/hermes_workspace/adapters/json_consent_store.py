"""``JsonConsentStore``: the user's consents to send a project's history to a remote embedding
service (issue 13, seed 003 section 5), in one small JSON file of ours (``HERMES_HOME/history/
consent.json``), never in the host's files."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from hermes_workspace.domain.errors import ConfigError, ConfigWriteError

FORMAT_VERSION = 1


class JsonConsentStore:
    """A :class:`~hermes_workspace.domain.ports.ConsentStore` in ``path``:
    ``{"version": 1, "consents": [{"service", "project", "granted_at"}]}``. Written atomically
    (a temporary file renamed over it), readable by its owner only (mode 0600). A missing file
    holds no consent; so does an unreadable or damaged one for :meth:`granted` (nothing is sent
    on a doubt), while :meth:`grant` and :meth:`revoke` refuse to overwrite it."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _load(self) -> list[dict[str, str]]:
        """The records. Raises ConfigError for a file that is not ours to overwrite."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ConfigError(f"cannot read the consent file {self.path}: {exc.strerror or exc}",
                              hint="Check its permissions.") from exc
        try:
            data = json.loads(text)
            records = data["consents"]
            if not isinstance(records, list) or not all(
                    isinstance(r, dict) and isinstance(r.get("service"), str) and isinstance(r.get("project"), str)
                    for r in records):
                raise ValueError("malformed records")
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"the consent file {self.path} is damaged ({exc})",
                              hint="Delete it and grant the consents again: "
                                   "hermes-workspace history consent --grant ...") from exc
        return [{"service": r["service"], "project": r["project"], "granted_at": str(r.get("granted_at", ""))}
                for r in records]

    def _save(self, records: list[dict[str, str]]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".consent-", suffix=".json", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"version": FORMAT_VERSION, "consents": records}, handle, indent=2, ensure_ascii=False)
                    handle.write("\n")
                os.chmod(temporary, 0o600)
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise ConfigWriteError(f"cannot save the consent file {self.path}: {exc.strerror or exc}",
                                   hint="Check that the Hermes home is writable.") from exc

    def granted(self, service: str, project_id: str) -> bool:
        """True when ``(service, project_id)`` is recorded; False on any doubt (a damaged file)."""
        try:
            records = self._load()
        except ConfigError:
            return False
        return any(r["service"] == service and r["project"] == project_id for r in records)

    def grant(self, service: str, project_id: str) -> None:
        """Record the consent (idempotent).

        Raises:
            ConfigError: the file is damaged or unreadable.
            ConfigWriteError: it cannot be written.
        """
        records = self._load()
        if any(r["service"] == service and r["project"] == project_id for r in records):
            return
        records.append({"service": service, "project": project_id,
                        "granted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self._save(records)

    def revoke(self, service: str, project_id: str | None = None) -> int:
        """Forget the consents of ``service`` (one project, or all); returns how many.

        Raises:
            ConfigError, ConfigWriteError: as :meth:`grant`.
        """
        records = self._load()
        kept = [r for r in records if not (r["service"] == service and project_id in (None, r["project"]))]
        if len(kept) != len(records):
            self._save(kept)
        return len(records) - len(kept)

    def consents(self) -> list[tuple[str, str, str]]:
        """Every ``(service, project_id, granted_at)``, sorted.

        Raises:
            ConfigError: the file is damaged or unreadable.
        """
        return sorted((r["service"], r["project"], r["granted_at"]) for r in self._load())
