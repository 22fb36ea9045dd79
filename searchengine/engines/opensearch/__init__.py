"""The OpenSearch engine: an index on an OpenSearch 2.19 cluster, reached over HTTP.

The only package that imports ``opensearchpy`` (always lazily, on first use:
the CLI with an index folder never pays for it):

* :mod:`.location` -- ``http(s)://[user:password@]host:port[,…]/NAME``
  parsed and shown without credentials;
* :mod:`.client` -- the client, and the one mapping of its failures to the
  package's errors (:func:`.client.cluster_errors`);
* :mod:`.mapping` -- index settings (analyzers, BM25 per field, shards and
  replicas), mappings and documents;
* :mod:`.writer` -- indexing: bulk loads into a new physical index behind
  the alias ``NAME``, updates and removals through it, a write lock;
* :mod:`.engine` -- :class:`~.engine.OpenSearchEngine`, the open index;
* :mod:`.knn` -- whether every node has the k-NN plugin (vector fields).
"""
