"""Demo (dataset → **demo**): the Chinese demo company's products: product lines (English model names, as Chinese shops
sell them), firmware releases, support topics and the facts they state."""

from __future__ import annotations

import datetime as dt

from tuner.dataset.demo._language import Attr, Name, ProductLine, Topic
from tuner.dataset.demo._values import Quantity, error_code, version
from tuner.dataset.demo.zh._values import date, decimal, percent, unit, wan, yuan

COMPANY = "澜星科技"
TODAY = dt.date(2025, 6, 1).toordinal()


def _a(key: str, label: str, quantity: Quantity, sentence: str, stale_sentence: str, ask: str = "多少") -> Attr:
    return Attr(key, label, quantity, sentence, stale_sentence, ask)


WHEN = "哪一天"
WHAT = "什么"
DAYS = unit("{n}天")
HOURS = unit("{n}小时", "{n}个小时")
MONTHS = unit("{n}个月")
MINUTES = unit("{n}分钟")
SECONDS = unit("{n}秒", "{n}秒钟")
GB = unit("{n}GB", "{n} GB", spoken=False)
METERS = unit("{n}米", "{n}m")
RECENT = Quantity(date, TODAY - 400, TODAY - 30, 1)

PRODUCT_COMMON = (
    _a("price", "售价", Quantity(yuan, 299, 19999, 100), "{s}的官方售价为{v}。", "官方定价：{v}。"),
    _a("weight", "重量", Quantity(decimal("{n}千克", "{n}公斤", "{n}kg"), 0.1, 3.5, 0.05), "{s}的整机重量为{v}。", "整机重量约{v}。"),
    _a("warranty", "保修期", Quantity(MONTHS, 12, 48, 6), "{s}享受{v}的有限保修。", "保修期为{v}。"),
    _a("launch", "上市日期", RECENT, "{s}于{v}正式开售。", "首销日期：{v}。", WHEN),
)

PRODUCT_LINES = tuple(ProductLine(*line) for line in (
    ("Aurora", "笔记本电脑", "A", (
        _a("memory", "内存容量", Quantity(GB, 8, 64, 8), "{s}标配{v}内存。", "内存：{v}。"),
        _a("battery", "续航时间", Quantity(HOURS, 6, 22, 1), "{s}充满电后可连续使用{v}。", "电池续航约为{v}。"))),
    ("Mercury", "路由器", "M", (
        _a("coverage", "覆盖面积", Quantity(unit("{n}平方米", "{n}㎡"), 80, 400, 10), "{s}的无线信号最多可覆盖{v}。", "覆盖范围可达{v}。"),
        _a("throughput", "最大传输速率", Quantity(unit("{n}Mbps", "{n} Mbps", spoken=False), 600, 9600, 200), "{s}的最大传输速率为{v}。", "峰值速率：{v}。"))),
    ("Orion", "显示器", "O", (
        _a("refresh", "刷新率", Quantity(unit("{n}Hz", "{n}赫兹", spoken=False), 60, 360, 12), "{s}支持最高{v}刷新率。", "刷新率：{v}。"),
        _a("brightness", "峰值亮度", Quantity(unit("{n}尼特", "{n}nits"), 250, 1600, 50), "{s}的峰值亮度可达{v}。", "亮度峰值为{v}。"))),
    ("Vega", "无线耳机", "V", (
        _a("battery", "续航时间", Quantity(HOURS, 15, 70, 1), "{s}单次充电可播放{v}。", "播放时长为{v}。"),
        _a("charge", "充满电所需时间", Quantity(MINUTES, 45, 180, 5), "{s}充满电需要{v}。", "约{v}即可充满。"))),
    ("Nimbus", "平板电脑", "N", (
        _a("storage", "存储容量", Quantity(GB, 64, 1024, 64), "{s}提供{v}存储空间。", "存储：{v}。"),
        _a("battery", "视频播放时长", Quantity(HOURS, 8, 18, 1), "{s}可连续播放本地视频{v}。", "视频播放可达{v}。"))),
    ("Helix", "智能手表", "H", (
        _a("water", "防水深度", Quantity(METERS, 30, 200, 10), "{s}可在{v}水深内正常防水。", "防水深度为{v}。"),
        _a("battery", "续航时间", Quantity(DAYS, 2, 21, 1), "{s}充一次电可使用{v}。", "每次充电可用{v}。"))),
    ("Atlas", "打印机", "P", (
        _a("speed", "打印速度", Quantity(unit("每分钟{n}页", "{n}页/分钟", "{n}ppm"), 18, 60, 2), "{s}的黑白打印速度为{v}。", "打印速度：{v}。"),
        _a("tray", "纸盒容量", Quantity(unit("{n}张"), 150, 550, 25), "{s}的纸盒可容纳{v}普通纸。", "纸盒容量为{v}。"))),
    ("Zephyr", "蓝牙音箱", "Z", (
        _a("output", "输出功率", Quantity(unit("{n}W", "{n}瓦", spoken=False), 20, 240, 10), "{s}的额定输出功率为{v}。", "输出功率：{v}。"),
        _a("battery", "续航时间", Quantity(HOURS, 8, 30, 1), "{s}不插电可连续播放{v}。", "脱离电源可播放{v}。"))),
    ("Lyra", "相机", "L", (
        _a("sensor", "传感器像素", Quantity(wan("像素"), 2000, 6100, 100), "{s}搭载{v}全画幅传感器。", "传感器像素：{v}。"),
        _a("shots", "单块电池拍摄张数", Quantity(unit("{n}张"), 300, 900, 20), "{s}每块电池可拍摄约{v}照片。", "单块电池可拍{v}。"))),
    ("Quasar", "投影仪", "Q", (
        _a("lumens", "亮度", Quantity(unit("{n}流明", "{n}lm", spoken=False), 1500, 5000, 100), "{s}的标称亮度为{v}。", "亮度：{v}。"),
        _a("lamp", "灯泡寿命", Quantity(HOURS, 3000, 20000, 500), "{s}的灯泡寿命为{v}。", "灯泡可使用{v}。"))),
    ("Tundra", "移动硬盘", "T", (
        _a("capacity", "容量", Quantity(unit("{n}TB", "{n} TB", spoken=False), 1, 20, 1), "{s}的存储容量为{v}。", "容量：{v}。"),
        _a("read", "读取速度", Quantity(unit("{n}MB/s", "{n} MB/s", spoken=False), 400, 2800, 50), "{s}的读取速度最高可达{v}。", "读取速度为{v}。"))),
    ("Pulse", "运动手环", "F", (
        _a("water", "防水深度", Quantity(METERS, 30, 100, 10), "{s}可在{v}水深内防水。", "防水等级对应{v}水深。"),
        _a("battery", "续航时间", Quantity(DAYS, 5, 25, 1), "{s}充满一次电可使用{v}。", "一次充电可用{v}。"))),
))

RELEASE_ATTRS = (
    _a("version", "版本号", Quantity(version, 310, 799, 1), "本次发布的{s}版本号为{v}。", "本文介绍的是{v}版本。", WHAT),
    _a("released", "发布日期", RECENT, "{s}于{v}正式推送。", "发布日期：{v}。", WHEN),
    _a("fixes", "修复问题数", Quantity(unit("{n}个问题", "{n}项问题"), 6, 60, 1), "{s}共修复了{v}。", "累计修复{v}。"),
    _a("size", "下载大小", Quantity(unit("{n}MB", "{n} MB", spoken=False), 40, 900, 10), "{s}的安装包大小为{v}。", "下载包约{v}。"),
)

SEASONS = (Name("spring", "春季"), Name("summer", "夏季"), Name("autumn", "秋季"), Name("winter", "冬季"))
GUIDES = (Name("user guide", "用户指南"), Name("installation guide", "安装指南"), Name("safety manual", "安全手册"))
SUPPORT_TOPICS = (
    Topic(Name("factory reset", "恢复出厂设置"), (
        _a("hold", "复位键按住时长", Quantity(SECONDS, 5, 30, 1), "如需将{s}恢复出厂设置，请按住复位键{v}。", "持续按住复位键{v}即可。"),
        _a("reboot", "重置后的重启时间", Quantity(MINUTES, 2, 15, 1), "重置后{s}大约需要{v}完成重启。", "重启约需{v}。"))),
    Topic(Name("error codes", "故障代码"), (
        _a("code", "过热警告错误代码", Quantity(error_code, 100, 999, 1), "{s}过热时会显示错误代码{v}。", "错误代码{v}表示设备过热。", WHAT),
        _a("cooldown", "过热后的冷却时间", Quantity(MINUTES, 5, 45, 5), "请让{s}冷却{v}后再继续使用。", "请等待{v}后再开机。"))),
    Topic(Name("battery care", "电池保养"), (
        _a("cycles", "电池额定循环次数", Quantity(unit("{n}次", "{n}次循环"), 300, 1500, 50), "{s}的电池额定可充放电{v}。", "电池耐久度：{v}。"),
        _a("storage_charge", "建议存放电量", Quantity(percent, 30, 80, 5), "长期存放{s}时，请将电量保持在{v}左右。", "存放时电量宜保持在{v}左右。"))),
    Topic(Name("connectivity", "无线连接"), (
        _a("range", "无线连接距离", Quantity(METERS, 8, 60, 1), "{s}的无线连接距离为{v}。", "无线距离：{v}。"),
        _a("pairing", "配对等待时长", Quantity(SECONDS, 30, 180, 10), "{s}进入配对模式后会等待{v}。", "配对窗口在{v}后关闭。"))),
    Topic(Name("software updates", "软件更新"), (
        _a("check", "检查更新间隔", Quantity(HOURS, 6, 72, 6), "{s}每隔{v}自动检查一次更新。", "每{v}检查一次更新。"),
        _a("support_end", "软件支持截止日期", Quantity(date, TODAY + 200, TODAY + 1500, 1), "{s}的软件更新将提供至{v}。", "更新服务截止于{v}。", WHEN))),
)
