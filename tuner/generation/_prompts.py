"""Answers (variants → **answers** → verdicts): what the prompts of every generator (and the LLM judge) share: the
language a prompt is written in, the text that stands where no passage was retrieved and the numbered passages; how a
local base model is prompted (:class:`LocalPrompt`, its variants as data) and how a chat model is
(:class:`ChatPrompt`: a system instruction and one user message)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tuner.llm import Message, fill
from tuner.text import Language, detect_language

NO_CONTEXT = "(no passages)"
"""The context of a prompt when retrieval kept no passage (v4 and empty retrievals still ask the question)."""

PromptLanguage = Literal["auto", "en", "zh"]
"""Which language's prompt a backend uses: ``auto`` = the question's language, else the one named."""


def format_contexts(contexts: Sequence[str]) -> str:
    """Contexts numbered ``[1]``, ``[2]``, ... in the order given, separated by blank lines (:data:`NO_CONTEXT` when
    there are none)."""
    if not contexts:
        return NO_CONTEXT
    return "\n\n".join(f"[{number}] {text.strip()}" for number, text in enumerate(contexts, start=1))


def prompt_language(question: str, setting: PromptLanguage) -> Language:
    """The language of the prompt for ``question``: ``setting`` unless it is ``auto``, else the
    question's language (``zh`` when at least :data:`tuner.text.ZH_THRESHOLD` of its letters are CJK).

    >>> prompt_language("保修期是多久？", "auto"), prompt_language("保修期是多久？", "en")
    ('zh', 'en')
    """
    return detect_language([question]) if setting == "auto" else setting


@dataclass(frozen=True)
class Shot:
    """A worked example shown to a base model before the real question: ``passages``, a ``question`` and the answer
    it should give (hand-written, in the words of a passage; never a case of a dataset it is evaluated on)."""

    passages: tuple[str, ...]
    question: str
    answer: str


@dataclass(frozen=True)
class LocalPrompt:
    """How a base model is asked, and where its answer ends: one builder, the variants as data.

    The prompt in language L is ``instruction[L]``, then each of ``shots[L]`` (``body[L]`` filled with the shot's
    passages and question, followed by its answer), then ``body[L]`` filled with the real passages and question, the
    parts a blank line apart. ``body`` holds ``{context}`` (the passages, unnumbered, a blank line between them: a 270M
    base model continues ``[1]`` numbers by copying a passage) and ``{question}``, and ends in the answer cue; an empty
    instruction is left out. ``stops``: decoding ends at the first of these once the model has written something (it
    goes on to write the next question, or a title line, once it has answered); the answer is the text before it
    (``tuner.generation._local.cut_answer``).
    """

    body: Mapping[Language, str]
    stops: tuple[str, ...] = ("\n",)
    instruction: Mapping[Language, str] = field(default_factory=dict)
    shots: Mapping[Language, tuple[Shot, ...]] = field(default_factory=dict)

    def render(self, language: Language, question: str, contexts: Sequence[str]) -> str:
        """The completion prompt for ``question`` over ``contexts`` (:data:`NO_CONTEXT` when there are none).

        >>> shot = Shot(("The lamp uses a 9-watt LED.",), "What LED?", "A 9-watt LED.")
        >>> print(LocalPrompt({"en": "{context}\\nQ: {question}\\nA:"}, instruction={"en": "Answer."}, shots={"en": (shot,)})
        ...       .render("en", "How long? ", [" 24 months. ", "Other."]))
        Answer.
        <BLANKLINE>
        The lamp uses a 9-watt LED.
        Q: What LED?
        A: A 9-watt LED.
        <BLANKLINE>
        24 months.
        <BLANKLINE>
        Other.
        Q: How long?
        A:
        """
        body = self.body[language]
        parts = [self.instruction.get(language, "")]
        for shot in self.shots.get(language, ()):
            parts.append(_filled(body, shot.question, shot.passages) + ANSWER_SPACE[language] + shot.answer)
        parts.append(_filled(body, question, contexts))
        return "\n\n".join(part for part in parts if part)


ANSWER_SPACE: Mapping[Language, str] = {"en": " ", "zh": ""}
"""What stands between the answer cue and a shot's answer (``Answer: 24 months``, ``回答：24个月``)."""


def _filled(body: str, question: str, contexts: Sequence[str]) -> str:
    passages = "\n\n".join(text.strip() for text in contexts) if contexts else NO_CONTEXT
    return fill(body, question=question.strip(), context=passages)


@dataclass(frozen=True)
class ChatPrompt:
    """How a chat (instruction-tuned) model is asked: ``instruction[L]`` and ``user[L]`` filled with the numbered
    passages (``{context}``, :func:`format_contexts`) and the ``{question}``; the model's own chat template (in its GGUF
    file) turns the messages into its prompt. With ``system`` off (the default) they are one user message, the
    instruction first, a blank line, then the passages and the question: what the ``openai`` generator sends, and the
    template adds its own default system turn (Qwen's "You are Qwen, …"). With ``system`` on the instruction is the
    system message, which replaces that default, and the user message holds the rest.

    >>> prompt = ChatPrompt({"en": "Answer from the passages."}, {"en": "{context}\\nQuestion: {question}"})
    >>> prompt.messages("en", "How long? ", [" 24 months. "])
    [{'role': 'user', 'content': 'Answer from the passages.\\n\\n[1] 24 months.\\nQuestion: How long?'}]
    >>> ChatPrompt(prompt.instruction, prompt.user, system=True).messages("en", "How long?", ["24 months."])[0]
    {'role': 'system', 'content': 'Answer from the passages.'}
    >>> prompt.kept("en")
    'Answer from the passages.\\n\\n'
    """

    instruction: Mapping[Language, str]
    user: Mapping[Language, str]
    system: bool = False

    def messages(self, language: Language, question: str, contexts: Sequence[str]) -> list[Message]:
        """The messages for ``question`` over ``contexts``."""
        body = fill(self.user[language], question=question.strip(), context=format_contexts(contexts))
        if self.system:
            return [{"role": "system", "content": self.instruction[language]}, {"role": "user", "content": body}]
        return [{"role": "user", "content": self.instruction[language] + "\n\n" + body}]

    def kept(self, language: Language) -> str:
        """The start of the last message that comes before the passages (the instruction, the context cue): what a
        prompt too long for the model's context keeps whole, with the question at its end."""
        head = self.user[language].split("{context}")[0]
        return head if self.system else self.instruction[language] + "\n\n" + head
