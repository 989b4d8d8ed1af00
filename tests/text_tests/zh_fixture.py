"""A small Chinese knowledge base written for these tests: (doc_id, text) pairs and (question, doc_id) pairs.

Mixed on purpose: English product names, ASCII and full-width digits, units, quotes inside sentences.
"""

from __future__ import annotations

DOCS: list[tuple[str, str]] = [
    ("return", "本店支持七天无理由退货。退货时商品需保持完好，包装和配件齐全，运费由买家承担。"),
    ("warranty", "Aurora X200笔记本电脑享受两年整机保修，电池保修一年。保修期内人为损坏不在保修范围。"),
    ("shipping", "普通快递三到五个工作日送达，顺丰次日达需要另付１５元运费。偏远地区配送时间会延长。"),
    ("invoice", "电子发票在订单完成后七天内发送到您的邮箱。如需纸质发票，请联系客服并提供开票信息。"),
    ("member", "黄金会员每年收取99元会费，可享受全场九五折和每月两张免运费券。"),
    ("coupon", "优惠券不能与会员折扣叠加使用，每个订单最多使用一张，过期作废。"),
    ("hotline", "客服热线400-820-8820的服务时间是每天早上九点到晚上九点，节假日照常服务。"),
    ("x210", "Aurora X210配备32GB内存和1TB固态硬盘，售价8999元，比X200贵1500元。"),
    ("router", "Mercury路由器支持Wi-Fi 6，覆盖面积约两百平方米，适合三居室使用。"),
    ("router-reset", "路由器忘记密码时，按住背面的复位键十秒钟即可恢复出厂设置。"),
    ("phone-screen", "手机屏幕碎裂可以预约上门维修，更换原装屏幕的费用是六百八十元。"),
    ("battery", "新电池首次使用前无需刻意充满，日常保持电量在百分之二十到八十之间最有利于寿命。"),
    ("store-hours", "北京旗舰店位于朝阳区建国路88号，营业时间为上午十点至晚上十点。"),
    ("price-match", "购买后十五天内如果官网降价，可以申请退还差价，每个账户每月限申请三次。"),
    ("gift-card", "礼品卡有效期三年，余额可以分多次使用，但不能兑换现金。"),
    ("installment", "订单满三千元可以申请十二期免息分期，支持主流银行信用卡。"),
    ("privacy", "我们只会在您授权的情况下收集手机号码，并且不会向第三方出售个人信息。"),
    ("recycle", "旧手机回收估价在线完成，评估通过后三个工作日内把回收款打到您的账户。"),
    ("headphones", "Nova降噪耳机单次充电可连续播放三十小时，充电十分钟可使用五小时。"),
    ("watch", "Pulse智能手表支持五十米防水，可以在游泳时记录心率和距离。"),
    ("tv", "Vista电视的屏幕尺寸有五十五英寸和六十五英寸两种，都支持4K分辨率。"),
    ("camera", "Lumo相机套装包含一个标准变焦镜头、一块备用电池和一张64GB存储卡。"),
    ("oversea", "海外订单目前只配送到新加坡和马来西亚，关税由收件人支付。"),
    ("cancel", "订单在发货前可以随时取消，已付款项会在一到三个工作日内原路退回。"),
]

QUERIES: list[tuple[str, str]] = [
    ("退货的运费由谁承担？", "return"),
    ("X200笔记本的电池保修多久？", "warranty"),
    ("顺丰次日达要加多少运费？", "shipping"),
    ("纸质发票怎么申请？", "invoice"),
    ("黄金会员的会费是多少？", "member"),
    ("优惠券可以和会员折扣一起用吗？", "coupon"),
    ("客服热线几点上班？", "hotline"),
    ("Aurora X210的售价是多少？", "x210"),
    ("路由器密码忘了怎么办？", "router-reset"),
    ("换手机屏幕要多少钱？", "phone-screen"),
    ("旗舰店的营业时间", "store-hours"),
    ("官网降价能退差价吗？", "price-match"),
    ("礼品卡能换成现金吗？", "gift-card"),
    ("免息分期需要订单满多少钱？", "installment"),
    ("旧手机回收款多久到账？", "recycle"),
    ("降噪耳机充一次电能用多久？", "headphones"),
    ("智能手表游泳时能戴吗？", "watch"),
    ("海外订单配送到哪些国家？", "oversea"),
    ("已付款的订单取消后多久退款？", "cancel"),
    ("相机套装包含什么？", "camera"),
]
