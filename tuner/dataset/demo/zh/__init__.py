"""Demo (dataset → **demo**): the Chinese demo: 澜星科技, a consumer electronics company, in Chinese customer-service and
product documentation with English model names, figures in Arabic digits and units (``Nimbus N24平板电脑``, ``2999元``,
``2024年3月5日``, ``1361万用户``). Length is counted in characters."""

from __future__ import annotations

from tuner.dataset.demo._language import Catalog, Language, Phrasing
from tuner.dataset.demo.zh import _catalog, _company
from tuner.dataset.demo.zh._company import FACT_WORDINGS
from tuner.dataset.demo.zh._values import date


def _characters(text: str) -> int:
    return len(text)


def _bare(label: str) -> str:
    """Chinese has no article."""
    return label


CHINESE = Language(
    code="zh",
    catalog=Catalog.of(_catalog, _company),
    # Chinese sentences are about half as long in characters as English ones in letters, and the subject
    # (a model name) is repeated in every fact: 200-300 characters hold the facts plus some filler.
    phrasing=Phrasing(
        date=date, length=_characters, length_unit="characters", short_length=(200, 300), long_length=(750, 950),
        join="", avoid_page_figures=True, pronoun="它", indefinite=_bare, fact_wordings=FACT_WORDINGS,
        product_subject="{model}{noun}",
        product_title="{model}{noun}产品说明",
        product_short="{code}",
        release_subject="{line}{season}固件更新",
        release_title="{line}{season}固件更新说明",
        release_short="{line}{season}更新",
        line_devices="{line}系列{noun}",
        support_title="{line}技术支持：{topic}",
        support_short="{line}设备",
        guide_title="{line}{guide}",
        policy_subject="{region}地区的{policy}",
        policy_title="{company}{policy}（{region}）",
        policy_short="{region}的{topic}规定",
        region_devices="{region}地区销售的设备",
        region_handbook_title="{region}服务手册",
        handbook_title="{name}手册",
        partner_title="{name}（{role}）",
        store_subject="{city}门店",
        store_ref="{city}门店",
        store_title="{company}{city}门店",
        store_short="{city}那家店",
        plan_ref="{plan}套餐",
        plan_title="{plan}订阅服务",
        effective="生效日期：{date}。",
        edition="本版生效日期：{date}。",
        archive_title="{company}历史文档归档（{year}年）",
        heading="【{heading}】",
        question_one="{ref}的{label}是{ask}？",
        question_same="{ref_a}和{ref_b}的{label}分别是{ask}？",
        question_two="{ref_a}的{label_a}是{ask_a}？{ref_b}的{label_b}又是{ask_b}？",
    ),
)
