"""Text analysis (dataset → **text analysis** → chunks): every language-dependent step of tuner goes through here.

One module in charge of language, so chunking, BM25, reranking, the extractive reader (and, through
them, variant sampling and corruption) agree on what a token and a sentence are:

- :func:`detect_language` / :func:`cjk_share`: ``en`` or ``zh`` from the share of CJK ideographs;
- :func:`normalize_text`: NFKC (full-width digits and letters fold to ASCII) and lower case;
- :func:`analyzer_tokens`: the first stage's BM25 terms, the rule of the Milvus analyzer of the corpus's language,
  the same on both engines (repeats kept, no NFKC folding);
- :func:`bm25_tokens`: script-aware terms (what the reader and golden-set tools match words by): runs of letters and
  digits of any other script are words (``yucatán``, ``nội``; ASCII text keeps tuner's English rule), CJK runs are cut
  by a word segmenter, stopwords of
  both scripts dropped, so mixed Chinese/English text works;
- :func:`sentence_spans` / :func:`split_sentences`: one splitter for English and Chinese
  (。！？； with their closing quotes and brackets, line breaks, English . ! ?);
- :func:`is_blank`: text with nothing to read (whitespace of any script, invisible format characters);
- :func:`word_count`: words of a text in any script (whitespace words; segmented words inside CJK runs);
- numbers and dates written the Chinese way: :func:`parse_number` (七十, 1361万, 3万5千, 1.5亿),
  :func:`chinese_numeral`, :data:`NUMBER`; the lexical judge's normalization and the corruption rules use them;
- dates: :func:`find_dates` (2016年9月4日, 2023-05, May 2023 → ISO 8601).

Tokenization is script-aware rather than switched by language; a dataset's :data:`Language` is
validated and recorded (cache keys, provenance) and refuses settings meaningless for it.
"""

from tuner.text._language import (
    CJK,
    CJK_CHARS,
    LANGUAGES,
    ZH_THRESHOLD,
    DeclaredLanguage,
    Language,
    cjk_share,
    detect_language,
)
from tuner.text._numerals import (
    ARABIC,
    DIGITS,
    NOT_NUMBERS,
    NUMBER,
    chinese_numeral,
    format_number,
    has_chinese,
    parse_number,
)
from tuner.text._dates import DateMention, day_number, find_dates, parse_date
from tuner.text._segment import SEGMENTER, segment, tag
from tuner.text._sentences import SENTENCE_BREAK, sentence_breaks, sentence_spans, split_sentences
from tuner.text._stopwords import STOPWORDS_LATIN, STOPWORDS_ZH
from tuner.text._analyzer import ANALYZER_PUNCTUATION, analyzer_stopwords, analyzer_term_ids, analyzer_tokens
from tuner.text._tokens import bm25_token_lists, bm25_tokens, is_blank, normalize_text, plural, word_count

TEXT_LAYER_ID = f"text-v4-analyzer-{SEGMENTER}"
"""Identifies how BM25 tokens are made (rules and segmenter); part of every BM25 and candidate cache key. v4: the zh
analyzer rule cuts a Latin word holding ``.``, ``-`` or ``_`` as Milvus Lite's Python jieba does (issue 52 §1); v3: the
Milvus analyzer's rule with repeated query terms (:func:`analyzer_tokens`, issue 52 §1), and words of letters of any
script in :func:`bm25_tokens` (``yucatán`` was ``yucat``, ``n``; issue 54 §3); v1 was :func:`bm25_tokens` with each
query term once."""

__all__ = [
    "ANALYZER_PUNCTUATION",
    "ARABIC",
    "CJK",
    "CJK_CHARS",
    "DIGITS",
    "LANGUAGES",
    "NOT_NUMBERS",
    "NUMBER",
    "SEGMENTER",
    "SENTENCE_BREAK",
    "STOPWORDS_LATIN",
    "STOPWORDS_ZH",
    "TEXT_LAYER_ID",
    "ZH_THRESHOLD",
    "DateMention",
    "DeclaredLanguage",
    "Language",
    "analyzer_stopwords",
    "analyzer_term_ids",
    "analyzer_tokens",
    "bm25_token_lists",
    "bm25_tokens",
    "chinese_numeral",
    "cjk_share",
    "day_number",
    "detect_language",
    "is_blank",
    "find_dates",
    "format_number",
    "has_chinese",
    "normalize_text",
    "parse_date",
    "parse_number",
    "plural",
    "segment",
    "sentence_breaks",
    "sentence_spans",
    "split_sentences",
    "tag",
    "word_count",
]
