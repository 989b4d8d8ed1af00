"""Answers (variants → **answers** → verdicts): what the prompts of every generator (and the LLM judge) share: the
language a prompt is written in and the text that stands where no passage was retrieved."""

from __future__ import annotations

from typing import Literal

from tuner.text import Language, detect_language

NO_CONTEXT = "(no passages)"
"""The context of a prompt when retrieval kept no passage (v4 and empty retrievals still ask the question)."""

PromptLanguage = Literal["auto", "en", "zh"]
"""Which language's prompt a backend uses: ``auto`` = the question's language, else the one named."""


def prompt_language(question: str, setting: PromptLanguage) -> Language:
    """The language of the prompt for ``question``: ``setting`` unless it is ``auto``, else the
    question's language (``zh`` when at least :data:`tuner.text.ZH_THRESHOLD` of its letters are CJK).

    >>> prompt_language("保修期是多久？", "auto"), prompt_language("保修期是多久？", "en")
    ('zh', 'en')
    """
    return detect_language([question]) if setting == "auto" else setting
