"""Front (front → **what its reader reads**): every text of the study report and of the pick notes, one table per
language. The report of a study whose golden cases are Chinese is written in Chinese (:func:`tuner.text.detect_language`
of the questions, recorded as the study's ``language``; the study file's ``report_language`` overrides it), any other
in English. Technical names stay as they are in both (``recall@k``, ``top_k``, ``ε``, trial numbers, settings).

A text is a :meth:`str.format` template; both tables have the same keys and the same placeholders
(``tests/report_tests/test_report_language.py`` checks it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from tuner.dataset import SUMMARY_TEXTS

ReportLanguage = Literal["en", "zh"]
REPORT_LANGUAGES: tuple[ReportLanguage, ...] = ("en", "zh")

_EN: dict[str, str] = {
    "language": "en", "html_lang": "en",
    "title": "tuner study {name}",
    "heading": "Study {name}",
    # objectives and directions
    "recall_at_k": "recall@k", "v3_delta_faithful": "v3 Δfaithful", "v3_delta_correct": "v3 Δcorrect",
    "conflict_exposure": "conflict exposure", "context_words": "context words",
    "maximize": "maximize", "minimize": "minimize",
    # header
    "row_trials": "trials", "row_objectives": "objectives", "row_floor": "noise floor ε", "row_intervals": "intervals",
    "row_spent": "spent", "row_hypervolume": "hypervolume", "row_generated": "generated", "row_retrieval": "retrieval",
    "state_complete": "complete", "state_pruned": "pruned", "state_repeated": "repeated configurations not evaluated again",
    "state_fail": "failed", "state_running": "running", "state_waiting": "waiting",
    "call_generator": "generator calls", "call_judge": "judge calls", "call_tokens": "tokens",
    "call_cached_tokens": "of them prompt tokens served from the provider's prefix cache",
    "cost": "cost {cost} (at the backends' pricing)",
    "floor_none": "not recorded (ε = 0: exact dominance)",
    "floor_paired": " (one configuration's; two trials are compared paired, on the cases both scored)",
    "intervals": ("95%, one per figure: a mean of per-case scores in [0, 1] (recall@k) by the Wilson score interval, "
                  "honest at 0 and 1; a relative drop Δ by a case bootstrap; a difference of two trials by the paired "
                  "case bootstrap plus both trials' run-to-run noise"),
    "retrieval": ("external service {url}, knowledge {knowledge_id} (Dify External Knowledge API): only {searched} "
                  "searched; v3: {v3}; records matched to golden documents by {match}"),
    "dashboard": ("To browse the same trials interactively (history, slices, parallel coordinates), open the study's "
                  "storage in optuna-dashboard: {command} (install it with {install}; it serves a local page on port 8080)."),
    "warnings": "Warnings:",
    "unscorable": "unscorable ({why})", "infeasible": "infeasible ({why})", "kept_off": "{why}; kept off the front",
    "not_answered": "; not answered: no generator or judge request",
    # sections
    "section_front": "1. Front", "section_hypervolume": "2. Hypervolume history", "section_sweet": "3. Sweet spot: top_k",
    "section_importances": "4. Parameter importances", "section_picks": "5. Picked configurations by category",
    "section_compare": "6. Side by side with study '{name}'",
    # the front
    "empty_front": "Nothing is on the front: {why}. Nothing was exported.",
    "empty_unscorable": "every complete trial is unscorable ({count}: trial #{number}: {reason}; all are listed under warnings above)",
    "empty_none": "no trial has completed yet",
    "col_trial": "trial", "col_n": "n/N", "col_measured": "{name} (measured)", "col_susceptibility": "susceptibility",
    "not_measured": "not measured",
    "col_held_out": "{name} held out", "col_optimism": "{name} optimism", "col_tie": "ε-tie",
    "col_dominated_by": "ε-dominated by", "col_tuning": "{name} (tuning)",
    "note_held_out": ("Held out: each front member evaluated when the study ended on the confirmation cases the search "
                      "never saw (confirm: in the study file); optimism: how much better the tuning figure looked than "
                      "the held-out one, in the objective's direction (positive: the search's figure did not hold; for a "
                      "minimized objective, held out − tuning). Pick rules use the held-out figures."),
    "note_exposure": ("Conflict exposure: the share of cases whose context over the index with its conflicting documents "
                      "holds a conflicting chunk, exposed/all with its Wilson 95% interval — a retrieval fact, exact like "
                      "recall@k. Susceptibility: what the reader loses once shown one, Σ(f0 − f3) / Σ f0 over the exposed "
                      "cases (— when none is). v3 Δfaithful = faithfulness at risk × susceptibility when unexposed cases "
                      "keep their v0 context."),
    "shared_settings": "Every configuration below has {settings}.",
    "settings_line": "settings: {settings}",
    # paired differences
    "tied": "tied", "apart": "apart", "cases": "{n} cases", "separates": "; separates at ~{n}",
    "col_neighbours": "front neighbours", "col_difference": "{name} difference",
    "note_neighbours": ("Neighbouring front members compared paired on the cases both scored: the difference, its 95% "
                        "interval (case bootstrap of the per-case differences, plus both trials' run-to-run noise), "
                        "whether it holds 0, and about how many cases would separate a difference of that size (80% "
                        "power, α 5% two-sided). ε-ties and ε-dominance above are decided the same way."),
    # labels
    "labels": "Labels: {line}.",
    "labels_unknown": ("labels of unknown origin (no golden.provenance.json): whether they were judged only inside a "
                       "candidate pool is not recorded"),
    **SUMMARY_TEXTS,  # the labels' summary and pooling caveat: the console's lines (tuner.dataset)
    "col_lower_bound": "{name}, {n} no-answer case(s) as misses (lower bound)", "col_pooling": "pooling",
    # pruned trials
    "pruned_summary": "{n} pruned trial(s)", "col_look": "look", "col_cases_used": "cases used",
    "col_p": "p (Δ)",
    # picks
    "no_pick": "No configuration picked.",
    "no_categories": "The picked trials have no per-category scores (user attr by_category).",
    "col_rule": "rule", "col_category": "category", "col_pick_column": "{rules} #{number}: {heading}",
    "col_pick_runner_up": "pick − runner-up",
    "note_runner_up": ("Each pick against its runner-up (what its rule picks without it), paired {where}, as the front "
                       "neighbours above."),
    # pick notes (tuner.front.pick_notes)
    "pick_from_zero": ("trial #{number}: {measured} ({value}) cannot be told from no effect: its 95% interval with case "
                       "sampling and run-to-run noise holds 0"),
    "pick_subset": " on the {n}/{total} cases scored in both",
    "where_held_out": "on the {n} held-out cases", "where_tuning": "on the tuning cases",
    "pick_difference": "paired difference {difference} {interval}{subset}",
    "pick_from_neighbour": "trial #{number}: {measured} cannot be told from front neighbour #{neighbour}'s: {difference}",
    "pick_vs_neighbour": "trial #{number} vs front neighbour #{neighbour}: {measured} {difference}",
    # side by side
    "col_study": "study", "col_front_of": "front of complete", "col_front": "front", "col_knobs": "knobs the front uses",
    "front_of": "{front} of {complete}", "knobs_none": "none",
    "note_compare": ("hypervolume against one reference point ({reference}); a knob is used when a front member sets it "
                     "off its built-in default."),
    # figures
    "fig_front": "Front: {x} vs {y} (error bars: 95% intervals)",
    "fig_no_front": "No complete trial yet: there is no front to draw.",
    "legend_dominated": "dominated", "legend_front": "front", "legend_within_noise": "front, edge within noise (ε-dominated)",
    "legend_tie": "ε-tie T{group}: {members}", "legend_pruned": "pruned (partial values)", "legend_pick": "pick: {rules} #{number}",
    "legend_median": "median per top_k", "legend_hypervolume": "hypervolume",
    "hover_trial": "trial #{number}", "hover_pruned": "trial #{number} (pruned)",
    "axis": "{name} ({direction})", "axis_trial": "trial number (complete trials)", "axis_hypervolume": "hypervolume",
    "axis_importance": "importance (sums to 1)",
    "fig_hypervolume": "Hypervolume after each complete trial (reference: {reference})",
    "fig_no_hypervolume": "No complete trial yet: the hypervolume is empty.",
    "fig_sweet": "Sweet spot: each objective against top_k (other settings vary across trials)",
    "fig_sweet_panel": "{name} by top_k",
    "fig_no_top_k": "top_k was not searched in this study, so there is no top_k sweep to show.",
    "fig_importances": "Parameter importances per objective (PED-ANOVA)",
    "fig_few_trials": "Parameter importances need at least {least} complete trials; this study has {n}.",
    "fig_nothing_varied": "No parameter varied across the complete trials, so there is nothing to rank.",
    "fig_importance_failed": "optuna could not compute parameter importances for {name}: {error}",
    "fig_compare": "Fronts side by side", "fig_no_compare": "neither study has a complete trial yet",
}

_ZH: dict[str, str] = {
    "language": "zh", "html_lang": "zh-CN",
    "title": "tuner 调优研究 {name}",
    "heading": "调优研究 {name}",
    "recall_at_k": "召回率 recall@k", "v3_delta_faithful": "v3 忠实度下降 Δfaithful", "v3_delta_correct": "v3 正确率下降 Δcorrect",
    "conflict_exposure": "冲突暴露率", "context_words": "上下文词数",
    "maximize": "越大越好", "minimize": "越小越好",
    "row_trials": "试验", "row_objectives": "目标", "row_floor": "噪声下限 ε", "row_intervals": "区间",
    "row_spent": "花费", "row_hypervolume": "超体积", "row_generated": "生成时间", "row_retrieval": "检索",
    "state_complete": "完成", "state_pruned": "剪枝", "state_repeated": "重复配置（未再评估）",
    "state_fail": "失败", "state_running": "运行中", "state_waiting": "等待中",
    "call_generator": "次生成调用", "call_judge": "次评审调用", "call_tokens": "个 token",
    "call_cached_tokens": "其中由服务商前缀缓存提供的提示 token",
    "cost": "费用 {cost}（按后端定价）",
    "floor_none": "未记录（ε = 0：精确支配）",
    "floor_paired": "（单个配置的噪声；两个试验在双方都有分数的案例上配对比较）",
    "intervals": ("95%，每个数字一个：每案例分数在 [0, 1] 的均值（recall@k）用 Wilson 区间，在 0 和 1 处仍然可靠；"
                  "相对下降 Δ 用案例自助法；两个试验之差用配对案例自助法，并加上两个试验各自的运行间噪声"),
    "retrieval": ("外部服务 {url}，知识库 {knowledge_id}（Dify 外部知识库 API）：只搜索 {searched}；v3：{v3}；"
                  "记录按 {match} 匹配到黄金集文档"),
    "dashboard": ("如需交互式浏览同一批试验（历史、切片、平行坐标），用 optuna-dashboard 打开本研究的存储：{command}"
                  "（安装：{install}；它在本机 8080 端口提供页面）。"),
    "warnings": "警告：",
    "unscorable": "无法评分（{why}）", "infeasible": "不可行（{why}）", "kept_off": "{why}；不列入前沿",
    "not_answered": "；未作答：没有生成或评审请求",
    "section_front": "1. 帕累托前沿", "section_hypervolume": "2. 超体积变化", "section_sweet": "3. 最佳区间：top_k",
    "section_importances": "4. 参数重要性", "section_picks": "5. 选中配置（按类别）",
    "section_compare": "6. 与研究 '{name}' 对比",
    "empty_front": "前沿为空：{why}。未导出任何配置。",
    "empty_unscorable": "所有完成的试验都无法评分（{count} 个：试验 #{number}：{reason}；全部列在上方警告中）",
    "empty_none": "还没有完成的试验",
    "col_trial": "试验", "col_n": "n/N", "col_measured": "{name}（实测）", "col_susceptibility": "易受影响度",
    "not_measured": "未测量",
    "col_held_out": "{name}（留出集）", "col_optimism": "{name} 乐观偏差", "col_tie": "ε 并列",
    "col_dominated_by": "被 ε 支配于", "col_tuning": "{name}（调优集）",
    "note_held_out": ("留出集：研究结束时，每个前沿成员在搜索从未见过的确认案例上评估（研究文件中的 confirm:）；乐观偏差："
                      "调优集上的数字比留出集好多少，按目标方向计算（为正：搜索得到的数字没有保持；对越小越好的目标，"
                      "为留出集 − 调优集）。选择规则使用留出集上的数字。"),
    "note_exposure": ("冲突暴露率：在含冲突文档的索引上，上下文中含有冲突片段的案例比例，暴露数/总数及其 Wilson 95% 区间——"
                      "这是检索层面的事实，像 recall@k 一样精确。易受影响度：一旦看到冲突片段，读者损失多少，"
                      "在暴露案例上为 Σ(f0 − f3) / Σ f0（没有暴露案例时为 —）。未暴露案例保持 v0 上下文时，"
                      "v3 Δfaithful = 有风险的忠实度 × 易受影响度。"),
    "shared_settings": "下面每个配置都有 {settings}。",
    "settings_line": "设置：{settings}",
    "tied": "无法区分", "apart": "可以区分", "cases": "{n} 个案例", "separates": "；约 {n} 个案例可区分",
    "col_neighbours": "前沿相邻成员", "col_difference": "{name} 之差",
    "note_neighbours": ("相邻前沿成员在双方都有分数的案例上配对比较：差值、其 95% 区间（每案例差值的案例自助法，加上两个试验"
                        "各自的运行间噪声）、区间是否包含 0，以及大约多少个案例才能区分这么大的差值（80% 功效，双侧 α 5%）。"
                        "上面的 ε 并列和 ε 支配也是这样判定的。"),
    "labels": "标注：{line}。",
    "labels_unknown": "标注来源未知（没有 golden.provenance.json）：无法知道标注是否只在候选池内判定",
    "labels_generated": "由 {by} 与文档一起写出：{cases} 条案例，每个问题的相关文档在生成时即已确定（没有候选池，因此没有候选池偏差）",
    "labels_reviewed": ("标注来自{pools}：{cases} 条案例，其中 {found} 条有在候选池外检索到的标注（{chunks}），"
                        "{no_answer} 条标为知识库中没有答案，{rejected} 条被拒绝{others}"),
    "labels_pool": "{retrievers} 候选池（深度 {depth}）",
    "labels_one_review": "对 {pool}的审核",
    "labels_reviews": "{n} 份草稿的审核：{parts}",
    "labels_draft": "{pool}，{n} 条案例",
    "labels_unreviewed": "，另有 {n} 条案例不是审核得来的（来源未知）",
    "labels_chunk": "{n} 个片段", "labels_chunks": "{n} 个片段",
    "labels_pool_note": ("{retriever} 在 top_k {top_k} 下是在 {retriever} 参与标注的问题上测得的（候选池深度 {depth}）："
                         "其召回率偏乐观；下限把无答案案例计为未命中"),
    "col_lower_bound": "{name}，{n} 个无答案案例计为未命中（下限）", "col_pooling": "候选池偏差",
    "pruned_summary": "{n} 个被剪枝的试验", "col_look": "检查轮次", "col_cases_used": "使用案例数",
    "col_p": "p (Δ)",
    "no_pick": "没有选中的配置。",
    "no_categories": "选中的试验没有分类别的分数（用户属性 by_category）。",
    "col_rule": "规则", "col_category": "类别", "col_pick_column": "{rules} #{number}：{heading}",
    "col_pick_runner_up": "选中 − 次选",
    "note_runner_up": "每个选中配置与其次选（该规则排除它之后会选的配置）配对比较，{where}，方法同上面的前沿相邻成员。",
    "pick_from_zero": "试验 #{number}：{measured}（{value}）无法与无效果区分：包含案例抽样和运行间噪声的 95% 区间包含 0",
    "pick_subset": "，基于双方都有分数的 {n}/{total} 个案例",
    "where_held_out": "（基于 {n} 个留出案例）", "where_tuning": "（基于调优案例）",
    "pick_difference": "配对差值 {difference} {interval}{subset}",
    "pick_from_neighbour": "试验 #{number}：{measured} 无法与前沿相邻成员 #{neighbour} 区分：{difference}",
    "pick_vs_neighbour": "试验 #{number} 对比前沿相邻成员 #{neighbour}：{measured} {difference}",
    "col_study": "研究", "col_front_of": "前沿/完成", "col_front": "前沿", "col_knobs": "前沿用到的参数",
    "front_of": "{front} / {complete}", "knobs_none": "无",
    "note_compare": "超体积以同一个参考点计算（{reference}）；前沿成员把某个参数设为非默认值即算用到该参数。",
    "fig_front": "帕累托前沿：{x} 对 {y}（误差线：95% 区间）",
    "fig_no_front": "还没有完成的试验：没有可画的前沿。",
    "legend_dominated": "被支配", "legend_front": "前沿", "legend_within_noise": "前沿，优势在噪声内（ε 被支配）",
    "legend_tie": "ε 并列 T{group}：{members}", "legend_pruned": "剪枝（部分值）", "legend_pick": "选中：{rules} #{number}",
    "legend_median": "每个 top_k 的中位数", "legend_hypervolume": "超体积",
    "hover_trial": "试验 #{number}", "hover_pruned": "试验 #{number}（剪枝）",
    "axis": "{name}（{direction}）", "axis_trial": "试验编号（完成的试验）", "axis_hypervolume": "超体积",
    "axis_importance": "重要性（总和为 1）",
    "fig_hypervolume": "每个完成试验之后的超体积（参考点：{reference}）",
    "fig_no_hypervolume": "还没有完成的试验：超体积为空。",
    "fig_sweet": "最佳区间：各目标随 top_k 的变化（其他设置在试验间不同）",
    "fig_sweet_panel": "{name} 随 top_k",
    "fig_no_top_k": "本研究没有搜索 top_k，因此没有 top_k 曲线。",
    "fig_importances": "各目标的参数重要性（PED-ANOVA）",
    "fig_few_trials": "参数重要性至少需要 {least} 个完成的试验；本研究有 {n} 个。",
    "fig_nothing_varied": "完成的试验之间没有参数变化，无可排序。",
    "fig_importance_failed": "optuna 无法计算 {name} 的参数重要性：{error}",
    "fig_compare": "两个前沿对比", "fig_no_compare": "两个研究都还没有完成的试验",
}

REPORT_TEXTS: dict[ReportLanguage, Mapping[str, str]] = {"en": _EN, "zh": _ZH}
"""Every text of the report and the pick notes, per language (same keys)."""


def report_texts(language: str | None) -> Mapping[str, str]:
    """The texts of ``language`` (``en`` or ``zh``); English for None or any other language.

    >>> report_texts("zh")["section_front"], report_texts(None)["section_front"]
    ('1. 帕累托前沿', '1. Front')
    """
    return REPORT_TEXTS["zh" if language == "zh" else "en"]
