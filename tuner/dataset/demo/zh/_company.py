"""Demo (dataset → **demo**): policies, regions, partners, stores, service plans, guides and the filler prose of the
Chinese demo company.

Ids are built from the ASCII ``key`` of each name; documents use its Chinese ``text``.
"""

from __future__ import annotations

from tuner.dataset.demo._language import Name, Topic
from tuner.dataset.demo._values import Quantity, version
from tuner.dataset.demo.zh._catalog import COMPANY, DAYS, GB, HOURS, MINUTES, RECENT, WHAT, WHEN, _a
from tuner.dataset.demo.zh._values import decimal, percent, unit, wan, yuan

WORKDAYS = unit("{n}个工作日")

REGIONS = (
    Name("mainland china", "中国大陆"), Name("hong kong", "香港"), Name("singapore", "新加坡"), Name("malaysia", "马来西亚"),
    Name("japan", "日本"), Name("korea", "韩国"), Name("germany", "德国"), Name("united states", "美国"),
)

POLICIES = (
    Topic(Name("return", "退换货政策"), (
        _a("window", "退货期限", Quantity(DAYS, 7, 90, 1), "根据{s}，客户可在签收后{v}内申请无理由退货。", "签收后{v}内可办理退货。"),
        _a("restocking", "拆封商品手续费", Quantity(percent, 10, 25, 1), "已拆封商品退货需收取商品金额{v}的手续费。", "拆封商品收取{v}手续费。"),
        _a("refund", "退款到账时间", Quantity(WORKDAYS, 3, 21, 1), "退款将在{v}内退回原支付账户。", "预计{v}内到账。")), "退换货"),
    Topic(Name("warranty", "保修政策"), (
        _a("claim", "故障报修期限", Quantity(DAYS, 10, 60, 1), "根据{s}，发现故障后须在{v}内报修。", "故障须在{v}内报修。"),
        _a("repair", "维修周期", Quantity(WORKDAYS, 4, 30, 1), "送修设备将在{v}内修复寄回。", "维修周期为{v}。"),
        _a("extension", "延长保修价格", Quantity(yuan, 99, 1999, 50), "延长保修服务的价格为{v}。", "延保服务售价{v}。")), "保修"),
    Topic(Name("shipping", "配送政策"), (
        _a("free", "包邮门槛", Quantity(yuan, 49, 499, 10), "根据{s}，订单满{v}即可享受免费标准配送。", "订单满{v}包邮。"),
        _a("express", "加急配送费", Quantity(yuan, 12, 79, 1), "加急配送每单收费{v}。", "加急运费为{v}。"),
        _a("standard", "标准配送时效", Quantity(WORKDAYS, 2, 12, 1), "标准配送一般需要{v}。", "标准包裹{v}内送达。")), "配送"),
    Topic(Name("security", "账户安全政策"), (
        _a("password", "密码最短长度", Quantity(unit("{n}个字符", "{n}位"), 10, 24, 1), "根据{s}，登录密码不得少于{v}。", "密码最短为{v}。"),
        _a("rotation", "密码更换周期", Quantity(DAYS, 30, 365, 15), "管理员账户的密码须每{v}更换一次。", "每{v}更换一次密码。"),
        _a("timeout", "会话超时时间", Quantity(MINUTES, 5, 120, 5), "闲置会话将在{v}后自动退出登录。", "会话超时时间为{v}。")), "账户安全"),
    Topic(Name("privacy", "隐私政策"), (
        _a("retention", "访问日志保存期限", Quantity(DAYS, 30, 720, 10), "根据{s}，访问日志保存{v}。", "日志保留{v}。"),
        _a("request", "个人数据查询答复时限", Quantity(DAYS, 7, 45, 1), "个人数据查询请求将在{v}内答复。", "请求将在{v}内得到答复。")), "隐私"),
    Topic(Name("payment", "付款政策"), (
        _a("installments", "最高分期期数", Quantity(unit("{n}期"), 3, 36, 3), "根据{s}，订单最多可分{v}付款。", "最多可分{v}。"),
        _a("minimum", "分期最低订单金额", Quantity(yuan, 500, 10000, 100), "订单金额满{v}方可申请分期付款。", "分期门槛为{v}。")), "分期付款"),
    Topic(Name("trade-in", "以旧换新政策"), (
        _a("credit", "以旧换新最高抵扣额", Quantity(yuan, 100, 5000, 50), "根据{s}，旧设备最高可抵扣{v}。", "抵扣金额上限为{v}。"),
        _a("inspection", "旧机检测时间", Quantity(WORKDAYS, 2, 14, 1), "旧机寄达后检测需要{v}。", "检测在{v}内完成。")), "以旧换新"),
)
HANDBOOKS = (Name("it", f"{COMPANY}员工办公设备"), Name("reseller", f"{COMPANY}经销商演示机"))

# Partners share a brand with a product line on purpose (Mercury物流 vs Mercury路由器): retrieval must not confuse them.
PARTNERS = (
    (Name("Mercury Logistics", "Mercury物流"), "配送合作伙伴"), (Name("Aurora Travel", "Aurora差旅"), "企业差旅服务商"),
    (Name("Orion Payments", "Orion支付"), "支付服务商"), (Name("Vega Insurance", "Vega保险"), "设备保险合作方"),
    (Name("Nimbus Cloud", "Nimbus云"), "云主机服务商"), (Name("Helix Recycling", "Helix回收"), "电子产品回收合作伙伴"),
    (Name("Atlas Freight", "Atlas货运"), "干线货运承运商"), (Name("Lyra Media", "Lyra传媒"), "广告代理商"),
    (Name("Quasar Capital", "Quasar资本"), "战略投资方"), (Name("Pulse Health", "Pulse健康"), "员工健康服务商"),
    (Name("Zephyr Couriers", "Zephyr闪送"), "同城快递合作方"), (Name("Tundra Storage", "Tundra仓储"), "仓储运营商"),
)
PARTNER_ATTRS = (
    _a("users", "年服务用户数", Quantity(wan("用户"), 120, 9800, 1), "{s}每年服务{v}。", "年服务规模：{v}。"),
    _a("renewal", "合同续约日期", Quantity(RECENT.fmt, RECENT.lo + 500, RECENT.hi + 700, 1), "与{s}的合作协议将于{v}续约。", "续约日期为{v}。", WHEN),
    _a("sla", "响应时效承诺", Quantity(HOURS, 2, 72, 2), "{s}承诺在{v}内响应工单。", "约定响应时间为{v}。"),
    _a("since", "合作起始日期", RECENT, "与{s}的合作始于{v}。", "双方自{v}起开展合作。", WHEN),
)

CITIES = (
    Name("shanghai", "上海"), Name("beijing", "北京"), Name("shenzhen", "深圳"), Name("guangzhou", "广州"),
    Name("hangzhou", "杭州"), Name("nanjing", "南京"), Name("chengdu", "成都"), Name("chongqing", "重庆"),
    Name("wuhan", "武汉"), Name("xian", "西安"), Name("suzhou", "苏州"), Name("tianjin", "天津"),
    Name("changsha", "长沙"), Name("zhengzhou", "郑州"), Name("qingdao", "青岛"), Name("xiamen", "厦门"),
    Name("ningbo", "宁波"), Name("hefei", "合肥"), Name("kunming", "昆明"), Name("dalian", "大连"),
)
STORE_ATTRS = (
    _a("opens", "工作日开门时间", Quantity(unit("上午{n}点", "{n}:00"), 7, 11, 1), "{s}工作日{v}开门营业。", "工作日营业时间从{v}开始。", "几点"),
    _a("staff", "员工人数", Quantity(unit("{n}名员工", "{n}人"), 8, 140, 1), "{s}目前共有{v}。", "现有{v}。"),
    _a("area", "营业面积", Quantity(unit("{n}平方米", "{n}㎡"), 120, 2400, 20), "{s}的营业面积为{v}。", "店面面积：{v}。"),
    _a("opened", "开业日期", Quantity(RECENT.fmt, RECENT.lo - 2000, RECENT.lo, 1), "{s}于{v}开业。", "首次开门营业是在{v}。", WHEN),
)

# Chinese shops name their plans in both languages; the keys stay the English names.
PLANS = (
    Name("Care Basic", "Care Basic"), Name("Care Plus", "Care Plus"), Name("Care Premium", "Care Premium"),
    Name("Cloud Backup", "云备份"), Name("Cloud Backup Pro", "云备份Pro"), Name("Family Sharing", "家庭共享"),
    Name("Business Fleet", "企业设备管家"), Name("Device Protect", "设备无忧"), Name("Studio Suite", "Studio创作套件"),
    Name("Print Refill", "打印耗材自动续订"), Name("Home Network Plus", "家庭网络Plus"), Name("Tutor Pass", "Tutor学习卡"),
    Name("Creator Pass", "Creator创作者卡"), Name("Fitness Coach", "健身私教"), Name("Security Shield", "安全卫士"),
    Name("Travel Connect", "出行畅联"), Name("Repair Express", "极速维修"), Name("Office Sync", "Office同步"),
    Name("Kids Safe", "儿童守护"), Name("Photo Vault", "相册保险箱"),
)
PLAN_ATTRS = (
    _a("monthly", "月费", Quantity(yuan, 12, 99, 1), "{s}套餐每月收费{v}。", "月费：{v}。"),
    _a("annual", "年费", Quantity(yuan, 120, 999, 10), "{s}按年付费为{v}。", "包年价格为{v}。"),
    _a("devices", "可绑定设备数", Quantity(unit("{n}台设备", "{n}台"), 2, 25, 1), "{s}最多可绑定{v}。", "最多可登记{v}。"),
    _a("trial", "免费试用期", Quantity(DAYS, 7, 60, 1), "新用户开通{s}可免费试用{v}。", "试用期为{v}。"),
)

GUIDE_ATTRS = (
    _a("temp_max", "最高工作温度", Quantity(unit("{n}°C", "{n}摄氏度", "{n}℃", spoken=False), 30, 55, 1), "{s}的工作环境温度不应超过{v}。", "工作温度上限为{v}。"),
    _a("temp_min", "最低存放温度", Quantity(unit("零下{n}°C", "-{n}°C", "零下{n}摄氏度", "零下{n}度", spoken=False), 5, 30, 1), "请勿将设备存放在低于{v}的环境中。", "存放温度下限为{v}。"),
    _a("adapter", "电源适配器功率", Quantity(unit("{n}W", "{n}瓦", spoken=False), 18, 240, 6), "随附电源适配器的额定功率为{v}。", "适配器功率：{v}。"),
    _a("cable", "线缆长度", Quantity(decimal("{n}米", "{n}m"), 0.5, 3, 0.1), "随附数据线长{v}。", "线长：{v}。"),
    _a("setup", "初次设置时间", Quantity(MINUTES, 5, 60, 5), "初次设置通常需要{v}。", "请预留{v}完成设置。"),
    _a("hotline", "客服热线服务时长", Quantity(unit("每天{n}小时", "每日{n}小时"), 8, 20, 1), "{s}的客服热线{v}有人接听。", "热线服务时间：{v}。"),
    _a("loaner", "备用机租赁费", Quantity(yuan, 30, 300, 10), "维修期间租用备用机的费用为{v}。", "备用机租金{v}。"),
    _a("cache", "本地缓存上限", Quantity(GB, 2, 48, 2), "{s}的本地缓存最多占用{v}。", "缓存上限为{v}。"),
    _a("certified", "安全认证日期", RECENT, "该设备于{v}获得安全认证。", "认证日期：{v}。", WHEN),
    _a("fall", "跌落测试高度", Quantity(decimal("{n}米", "{n}m"), 0.6, 2, 0.1), "设备通过了{v}高度的跌落测试。", "跌落测试高度为{v}。"),
    _a("firmware_min", "最低固件版本", Quantity(version, 200, 299, 1), "本指南所述功能需要固件{v}或更高版本。", "最低固件要求：{v}。", WHAT),
    _a("noise", "满载噪音", Quantity(unit("{n}分贝", "{n}dB"), 18, 48, 1), "{s}满负荷运行时噪音低于{v}。", "噪音不超过{v}。"),
)

INTRO = (
    "本页面由{company}文档团队维护。",
    "{company}面向客户和合作伙伴发布本页面内容。",
    "以下信息适用于{company}的全部销售渠道。",
    "联系客服前，请先仔细阅读本页面。",
)
FILLER = (
    "客户可通过官网在线客服或客服热线联系我们。",
    "本页信息以最新发布版本为准，此前的公告与纸质宣传单同时作废。",
    "各地经销商可能开展自有促销活动，相关活动不在本页说明范围内。",
    "单独购买的配件以其随附文档为准。",
    "如对本页内容有意见或建议，欢迎通过帮助中心的反馈表提交。",
    "规格参数均在实验室条件下测得，日常使用中可能略有差异。",
    "企业客户如需批量采购，请联系专属客户经理。",
    "页面中的截图与示意图仅供参考，请以实物为准。",
    "部分功能取决于设备安装的软件版本及当地网络环境。",
    "每当有重大变更上线，我们的工程师都会复核本页内容。",
    "本页未定义的条款以通用销售条款为准。",
    "本页的外文译本仅为方便阅读提供，如有歧义以中文版本为准。",
    "通过第三方渠道购买的客户请妥善保管渠道开具的发票。",
    "如需环保信息或回收说明，可向客服索取。",
    "帮助中心还收录了常见问题的解答。",
    "本页提及的产品名称均为其各自所有者的商标。",
    "报告问题前，请先将设备软件升级至最新版本。",
    "退换货期限届满前，请保留商品的原包装。",
    "操作说明默认设备已绑定客户账户。",
    "到店前可先致电门店确认现货情况。",
    "人为损坏、私自改装及进液损坏另行处理。",
    "如当地法律赋予消费者更多权利，以当地法律为准。",
    "客服人员可能会要求您提供设备序列号和购买凭证。",
    "设备机身上印刷的安全提示优先于本页内容。",
)
SECTIONS = ("概述", "快速入门", "日常使用", "维护保养", "故障排除", "安全须知", "售后服务", "附录")
SUBJECT_FILLER = (
    "{s}由{company}自主设计并完成测试。",
    "关于{s}的问题，客服团队均可解答。",
    "以下为{s}的最新说明。",
    "早期资料中关于{s}的参数可能与本页不同。",
    "零售合作伙伴获得的{s}信息与本页一致。",
    "将{s}与相近内容对照时，请逐项核对数字。",
)
GUIDE_FILLER = (
    "请在干净平整的桌面上拆开{s}的包装，并核对包装盒上列出的配件是否齐全。",
    "将{s}连接到接地良好的插座，等待状态指示灯变为常亮。",
    "请在客户门户中注册{s}，以便及时收到保修和更新通知。",
    "请用干燥的无绒布擦拭机身，切勿使用喷雾或溶剂。",
    "如状态指示灯闪烁琥珀色，请断开电源，稍候片刻再重新连接。",
    "请始终保持通风口清洁，避免被灰尘、纸张或织物遮挡。",
    "送修前请备份个人数据，并取出可移动存储介质。",
    "请勿自行拆开机壳，机内没有用户可自行维修的部件。",
    "请仅使用经认证适用于{s}的充电器和线缆。",
    "儿童须在成人监护下使用{s}。",
    "设备长时间不用时，请断开电源。",
    "技术人员对每次维修都按标准检查清单操作并记录结果。",
    "更换部件均为原厂部件或质量与性能相当的部件。",
    "废旧电池请按当地回收规定处理，切勿混入生活垃圾。",
    "微波炉或无绳电话的干扰可能降低无线性能。",
    "管理员可在管理控制台中批量管理多台设备的设置。",
    "可在设置菜单中生成诊断报告，并附在客服工单中提交。",
    "任何对安全功能的改动都会导致{s}的认证失效。",
)
FACT_WORDINGS = (
    "{s}的{label}为{v}。",
    "{s}的{label}是{v}。",
    "关于{s}：{label}为{v}。",
    "{label}（{s}）：{v}。",
)
