"""The private names of Whoosh and NLTK the embedded engine relies on are all there."""

from searchengine.engines.whoosh import internals


def test_the_installed_whoosh_and_nltk_have_every_private_name_the_engine_uses():
    gone = internals.missing()
    assert gone == [], (
        "the installed Whoosh or NLTK lacks private names the embedded engine uses: "
        + ", ".join(gone)
        + " (see searchengine/engines/whoosh/internals.py; pin the tested releases)"
    )


def test_a_missing_name_is_reported_by_module_class_and_name(monkeypatch):
    from nltk.stem.porter import PorterStemmer

    monkeypatch.delattr(PorterStemmer, "_step1a")
    assert internals.missing() == ["nltk.stem.porter.PorterStemmer._step1a"]
