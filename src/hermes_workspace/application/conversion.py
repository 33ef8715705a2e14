"""The document converters of a workspace, by suffix, and their cache (used by indexing and ``read``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from hermes_workspace.domain.errors import ConverterUnavailableError, reraise_interrupt
from hermes_workspace.domain.model import ConvertedDocument, FileRecord
from hermes_workspace.domain.ports import ConversionCache, Converter


class Conversions:
    """Which converter reads which suffix, built on first use, and the conversion cache.

    ``selection``: lower-case suffix (``.pdf``) -> converter name; ``load(name)`` builds a
    converter (raises ``ConverterUnavailableError`` when its library is missing; any other
    exception counts as that too, with its message); each name is loaded at most once, when a
    file of one of its suffixes is first met, so that a run without documents never imports a
    converter library. ``cache``: converted texts by content hash and converter signature, or
    ``None`` (convert every time).
    """

    def __init__(
        self,
        selection: Mapping[str, str],
        load: Callable[[str], Converter],
        cache: ConversionCache | None = None,
    ) -> None:
        self.selection = {suffix.lower(): name for suffix, name in selection.items()}
        self.cache = cache
        self._load = load
        self._loaded: dict[str, Converter | ConverterUnavailableError] = {}

    @classmethod
    def of(cls, converters: Mapping[str, Converter], cache: ConversionCache | None = None) -> Conversions:
        """Conversions with ready converters by suffix (tests, the Python API)."""
        by_name = {f"{suffix.lower()}:{converter.name}": converter for suffix, converter in converters.items()}
        selection = {suffix.lower(): f"{suffix.lower()}:{converter.name}" for suffix, converter in converters.items()}
        return cls(selection, by_name.__getitem__, cache)

    @property
    def suffixes(self) -> frozenset[str]:
        """Every suffix with a configured converter, runnable or not: the file source offers
        these files even where its binary-suffix rule would skip them."""
        return frozenset(self.selection)

    def _get(self, path: Path) -> Converter | ConverterUnavailableError | None:
        name = self.selection.get(path.suffix.lower())
        if name is None:
            return None
        found = self._loaded.get(name)
        if found is None:
            try:
                found = self._load(name)
            except ConverterUnavailableError as exc:
                found = exc
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken converter is reported, never a traceback
                reraise_interrupt(exc)
                found = ConverterUnavailableError(
                    f"the {name} converter cannot be loaded ({type(exc).__name__}: {exc})"
                )
            self._loaded[name] = found
        return found

    def converter_for(self, path: Path) -> Converter | None:
        """The converter for ``path``'s suffix (case-insensitive), or ``None`` (no converter, or
        one that cannot run: :meth:`unavailable_for` says why)."""
        found = self._get(path)
        return None if found is None or isinstance(found, ConverterUnavailableError) else found

    def unavailable_for(self, path: Path) -> ConverterUnavailableError | None:
        """Why ``path``'s converter cannot run, or ``None`` (it can, or there is none)."""
        found = self._get(path)
        return found if isinstance(found, ConverterUnavailableError) else None

    def document(self, converter: Converter, data: bytes, digest: str, path: Path) -> ConvertedDocument:
        """``data`` (the bytes of ``path``, SHA-256 ``digest``) converted: from the cache when it
        holds this content converted by this converter's signature, else converted and kept.

        Raises:
            whatever ``converter.convert`` raises (``NoTextLayerError``, ``ConversionError``...);
            TypeError: it returned something other than a :class:`ConvertedDocument`.
        """
        signature = converter.signature
        if self.cache is not None:
            cached = self.cache.get(digest, signature)
            if cached is not None:
                return cached
        document = converter.convert(data, path)
        if not isinstance(document, ConvertedDocument) or not isinstance(document.text, str):
            raise TypeError(f"it returned {type(document).__name__}, not a ConvertedDocument")
        if self.cache is not None:
            self.cache.put(digest, signature, document)
        return document

    def prune_cache(self, records: Iterable[FileRecord]) -> int:
        """Drop the cached conversions no indexed file uses any more (its content changed, it
        left the index, or its converter changed); returns how many went."""
        if self.cache is None:
            return 0
        keep = []
        for record in records:
            converter = self.converter_for(record.path)
            if converter is not None:
                keep.append((record.content_hash, converter.signature))
        return self.cache.prune(keep)
