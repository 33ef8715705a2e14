"""Defaults, well-known names and the built-in rule sets. Standard library only."""

from __future__ import annotations

HERMES_HOME_ENV = "HERMES_HOME"
"""Environment variable naming the Hermes home directory (default ``~/.hermes``)."""

DEFAULT_HOME_DIRNAME = ".hermes"
CONFIG_FILENAME = "config.yaml"
WORKSPACE_DIRNAME = "workspace"
INDEX_DIRNAME = ".index"
INDEX_FILENAME = "workspace.sqlite"
LOCK_FILENAME = "index.lock"
LOGS_DIRNAME = "logs"
LOG_FILENAME = "workspace.log"
IGNORE_FILENAME = ".hermesignore"
GITIGNORE_FILENAME = ".gitignore"

WORKSPACE_SUBDIRS = ("docs", "notes", "data", "code", "uploads", "media")
"""Seed 000: folders created in the primary workspace when ``workspace.enabled`` is true."""

DEFAULT_CHUNK_SIZE = 256
"""Most words per chunk. Seed 000 says 512 and seed 001 512 tokens; those are a ceiling, not a
goal: chunks follow structure (:mod:`hermes_workspace.domain.structure`), so this cap only cuts
units larger than it. Measured on the whole-repository sets (``benchmarks/workspace_qa.py``,
keyword mode): top-3 on keyword-style queries is 95-100% for every cap from 128 to 512 words,
while the median hit grows (22-25 lines at 128, 30 at 200, 31-36 at 256, 39-45 at 512). 256 keeps
hits near the gold spans (30-40 lines) and keeps whole a paragraph of ordinary length: at 200,
8 of arcd's 255 passages (up to 247 words) were cut in two and its nDCG@10 fell from 0.8067 to
0.8041; at 256 none is."""
DEFAULT_OVERLAP = 0
"""Words repeated between consecutive parts of one split unit (never across units: a chunk's
context is its breadcrumb). Seed 000 says 80 for fixed windows; with structural chunks, 30 words
changed no top-3 figure on the development sets and only grows the index."""
MAX_CHARS_PER_WORD = 16
"""Character cap of a chunk, per word of ``chunk_size``: a chunk's own text (before overlap) holds
at most ``chunk_size * MAX_CHARS_PER_WORD`` characters (8,192 for 512 words), and a line longer
than that is a *long line*, the only kind a chunk may start inside. Words are runs of
non-whitespace, so a minified or base64 file without spaces is one "word" of megabytes: without
this cap it would be one chunk returned whole by every hit. Why 16: measured characters per word
(all characters, indentation included, over ``str.split()`` words) are about 6.5 in plain prose,
8 in the median markdown/reStructuredText file (code blocks and tables raise it) and 11 in the
median Python file of the standard library (indentation counts; 99th percentile 19). 16 leaves
headroom over typical text and code, so the cap mostly cuts text that is not words (minified
code, data, base64); it also splits about 3% of the stdlib's 512-word chunks (deeply indented
code), at line starts. Changing it changes chunks: bump ``domain.chunking.POLICY_VERSION``."""
DEFAULT_THRESHOLD = 0
"""Files of at most this many words are stored as one chunk, whatever their structure. Seed 000
says 16,000; DESIGN.md §6 set it to ``chunk_size`` before chunks followed structure. Now 0 (off):
a 300-word page with five sections gives five chunks, each with its breadcrumb, and a small file
is one chunk anyway (tiny pieces are packed)."""
DEFAULT_MAX_FILE_MB = 10.0
DEFAULT_SEARCH_LIMIT = 20

MAX_QUERY_TERMS = 64
"""Distinct query terms kept after normalization; longer queries are cut (a pasted page of text
would otherwise compile to a MATCH of thousands of OR-ed phrases)."""
MIN_TERM_CHARS = 2
"""Seed 000: query tokens shorter than this are dropped."""

BINARY_SUFFIXES: frozenset[str] = frozenset(
    {
        # images
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".tif", ".tiff", ".webp",
        ".heic", ".psd", ".svg", ".avif", ".pbm", ".pgm", ".ppm", ".pnm", ".xcf",
        # audio / video
        ".mp3", ".mp4", ".m4a", ".wav", ".flac", ".ogg", ".oga", ".opus", ".aac", ".mov", ".avi",
        ".mkv", ".webm", ".wmv", ".flv",
        # archives and packages
        ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".jar", ".war",
        ".whl", ".egg", ".deb", ".rpm", ".dmg", ".iso", ".apk",
        # compiled and native
        ".exe", ".dll", ".so", ".dylib", ".a", ".o", ".obj", ".lib", ".wasm", ".class", ".pyc",
        ".pyo", ".pyd", ".bin", ".dat", ".elf",
        # documents that need a converter (a later issue)
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp",
        ".epub",
        # fonts
        ".ttf", ".otf", ".woff", ".woff2", ".eot",
        # data and databases
        ".sqlite", ".sqlite3", ".db", ".parquet", ".feather", ".npy", ".npz", ".pkl", ".pickle",
        ".h5", ".hdf5", ".onnx", ".pt", ".pth", ".safetensors",
        # lock files: text, but huge and rarely a search target (seed 000)
        ".lock",
    }
)
"""Suffixes skipped without reading (compared lower-cased)."""

DEFAULT_IGNORE_RULES = """\
# hermes-workspace ignore rules (gitignore syntax). Edit freely: this file is never overwritten.

# Version control
.git/
.svn/
.hg/

# OS files
.DS_Store
Thumbs.db
Desktop.ini

# IDE / editor
.idea/
.vscode/
*.swp
*.swo
*~

# Python
__pycache__/
*.pyc
*.pyo
.tox/
.venv/
venv/
.env
*.egg-info/
.eggs/
dist/
build/

# JavaScript / Node
node_modules/
bower_components/
.npm/
.yarn/

# Build outputs
target/
out/
_build/

# Secrets
*.pem
*.key

# Hermes internals
.index/
"""
"""Seed 000's default ``.hermesignore`` (``.env`` widened from a folder rule to files too, and key
files added, so secrets stay out of the index by default): seeded into the primary workspace and used for any root
that has neither a ``.hermesignore`` nor a ``.gitignore``."""

MARKDOWN_SUFFIXES: frozenset[str] = frozenset({".md", ".mdx", ".markdown"})

CODE_LANGUAGES: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".rs": "rust", ".go": "go", ".java": "java", ".kt": "kotlin", ".kts": "kotlin",
    ".scala": "scala", ".swift": "swift",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php", ".lua": "lua",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".r": "r", ".jl": "julia",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml",
    ".dart": "dart", ".zig": "zig", ".sql": "sql", ".pl": "perl", ".pm": "perl",
}
"""File suffix (lower-cased) -> tree-sitter grammar name. Mapping known suffixes avoids a
language-detection model call per file (DEPENDENCIES.md)."""
