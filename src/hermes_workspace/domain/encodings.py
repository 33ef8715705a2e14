"""Evidence from sibling files for a file whose legacy encoding is ambiguous on its own.

A short file can read equally well in two code pages (an all-lowercase Russian line in cp1251
and in KOI8-R; ``à`` in cp1252 and ``ŕ`` in cp1250). Files of one folder were nearly always
written by the same tool in the same encoding, so when its siblings were read unambiguously in
one of the candidate encodings, that one is taken (the nearest folder with such files decides,
up to the root). The rule is deterministic: it looks only at
files already decided (in the index, or earlier in the same run), never at which worker process
saw what first. Standard library only.
"""

from __future__ import annotations

import codecs
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path


def _codec(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def sibling_hint(
    path: Path, root: Path, candidates: Sequence[str], decided: Iterable[tuple[Path, str]]
) -> str | None:
    """The candidate encoding the siblings of ``path`` vote for, or ``None``.

    Args:
        path: the ambiguous file.
        root: its root folder.
        candidates: the encodings (Python codec names or aliases) that read it equally well.
        decided: ``(path, encoding)`` of files read unambiguously in a legacy encoding.

    Scopes, nearest first: the files of the same folder, then those under its parent folder, and
    so on up to the root (``old/mac/a.txt`` asks ``old/mac/``, then ``old/``, then the root: a
    root that keeps Mac files in one folder and Windows files in another answers for each from
    its own folder). The nearest scope holding any decided file decides alone: its most frequent
    encoding is the hint when it is one of ``candidates`` and strictly more frequent than every
    other encoding there (a folder split between two code pages gives no hint). Never raises.
    """
    wanted = {_codec(name) for name in candidates} - {None}
    if not wanted:
        return None
    folder = path.parent.parts
    top = len(root.parts)
    if folder[:top] != root.parts:
        return None
    # votes[depth]: the decided files whose nearest common folder with ``path`` is that deep.
    votes: dict[int, Counter[str]] = {}
    for other, encoding in decided:
        codec = _codec(encoding)
        if other == path or codec is None:
            continue
        parts = other.parent.parts
        if parts[:top] != root.parts:
            continue
        depth = top
        while depth < min(len(parts), len(folder)) and parts[depth] == folder[depth]:
            depth += 1
        votes.setdefault(depth, Counter())[codec] += 1
    if not votes:
        return None
    ranked = votes[max(votes)].most_common(2)
    best, count = ranked[0]
    if best in wanted and (len(ranked) == 1 or count > ranked[1][1]):
        return best
    return None
