"""How the E_POLICY customer reads an agent's question: which facts of their situation it asks for.

People ask for one fact in many ways ("What do the items in your order add up to?" is the
order subtotal; "Where did you see the lower price?" the competitor type; "Are you a
rewards member?" the membership tier), and the same word can point at different facts
("how much" the order, the item or the gift card; "when" the purchase or the delivery).
So a question is read part by part (`request_parts`), and each part by tiers of rules,
the strongest match deciding among facts asked in similar words (`RIVALS`):

4. the policy's own label of the fact ("order subtotal"), and phrasings whose context
   settles it ("where ... lower price" is the competitor, not the price gap);
3. words that name the fact wherever they appear (`Slot.keywords`, `Slot.choices`) and
   specific phrasings (`_CUES`: "how long ago did you buy", "what did you pay for it");
2. weaker cues ("price", "cost", "size"), and 1. bare "how much": guesses, used only when
   nothing stronger matched.

A part that no rule places is matched against prototype questions on the static sentence
embedding (`Paraphrases`). A part still unplaced, or placed only by a guess (a weak cue, a
paraphrase's likeness), is *unmapped*: the customer says what it can and offers the rest
of its situation rather than risk dropping what was asked.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ecom_bench.users.understanding import Paraphrases, content_words, is_check_in, request_parts
from ecom_bench.domains.policy.rules import SLOTS

#: When something happened ("how long ago", "how many days", "when", "date") ...
_TIME = (r"(?:when(?! (?:you|it|i|we|they)\b)|(?:tell me|know|ask|share|confirm|remember|recall|say|wondering|"
         r"find out|check|note) when|how long ago|how many (?:days|weeks)|how recent(?:ly)?|how long has it been|"
         r"what date|which date|what day|which day|days? ago|weeks? ago|ago|since|date|recently|timeline|how far back)")
#: ... and what happened: the delivery, or the purchase (verbs: "your order" is not a purchase time).
_DELIVERED = (r"(?:deliver(?:ed|y)|arriv(?:e|ed|al)|receiv(?:e|ed)|get (?:it|the (?:item|package|parcel))|"
              r"got (?:it|the (?:item|package|parcel|order))|c[ao]me|show(?:ed)? up|turn(?:ed)? up|reach(?:ed)? you|"
              r"land(?:ed)?|in your hands|get to you|got to you)")
_BOUGHT = (r"(?:buy|bought|purchas\w*|ordered|order it|did you order|place[ds]? (?:the|your|an|this) order|placing "
           r"(?:the|your|an) order|check(?:ed)? out|make the purchase|made the purchase|get it from us|placed|"
           r"purchase (?:was )?made)")
#: Asking *when in the year* ("what time of year did you buy it") is the purchase period, not its date.
_PERIOD = (r"time of (?:the )?year|in the year|(?:part|time|period|month|season) of the year|seasons?|holidays?|"
           r"sales?|black friday|christmas|clearance")
_PRICE_WORDS = r"(?:cheaper|lower|less|better (?:price|deal|offer)|price|deal|offer|sells?|selling|sold|discount)"


def _near(a: str, b: str) -> str:
    """Both phrases in one part, in either order."""
    return rf"\b{a}\b.*\b{b}\b|\b{b}\b.*\b{a}\b"


#: slot -> (strength, pattern) of the phrasings that need context (tiers 4 to 1; see the module docstring).
_CUES: dict[str, tuple[tuple[int, str], ...]] = {
    "subtotal": (
        (4, r"\b(?:add|adds|added|adding) up\b"),
        (4, r"(?:how much|what).*\b(?:come|comes|came|coming) (?:out )?to\b(?! (?:you|your))"),
        (4, r"\b(?:whole|entire|full|complete) (?:order|basket|cart)\b"),
        (4, r"\b(?:how big|how large|size of) (?:is )?(?:the |your |this )?(?:order|basket|cart)\b"),
        (4, r"\b(?:everything|all the items|all of the items|all your items|all the things)\b.*\b(?:cost|come to|total|"
            r"worth|spend|spent|price|how much)|\b(?:sum|total|cost) of (?:everything|all)\b"),
        (3, r"\btotal\b"),
        (3, r"\b(?:order|basket|cart)(?:'s)? (?:cost|worth|value|amount|come|total|price)"),
        (3, r"\b(?:value|cost|amount|size|sum|total|price) of (?:the |your |this )?(?:order|basket|cart|purchase)\b"),
        (3, r"\b(?:order|basket|cart)\b.*\b(?:over|under|more than|less than|above|below|at least)\b.*(?:\$\s?\d|"
            r"\d+ dollars)"),
        (3, r"\bhow much (?:was|is|did|does) (?:the|your|this) (?:order|basket|cart|purchase)\b(?! (?:weigh))"),
        (3, r"\bhow much (?:did|do|have) you spen[dt]\b(?! on (?:it|the item|the product|that|this)\b)"),
        (3, _near(r"spen[dt]", r"(?:order|altogether|in all|overall|in total)")),
        (3, r"\b(?:altogether|all together|in all|overall)\b"),
    ),
    "item_price": (
        (4, r"\bhow much (?:was|is|did|does) (?:it|the item|the product|that|this|the thing)\b(?! (?:weigh|come|add))"
            r"(?!.*\b(?:cheaper|lower|less|card)\b)"),
        (4, r"\bhow much (?:did|do) you pay\b(?! (?:with|by|using|via))(?!.*\b(?:order|card)\b)"),
        (4, r"\bwhat did you pay\b(?! (?:with|by|using|via))(?!.*\border\b)"),
        (4, r"\b(?:what|how much) (?:did|does) (?:it|the item|the product|that|this) cost"),
        (4, r"\bwhat (?:it|the item|the product) cost\b|\bhow much (?:it|the item|the product) (?:cost|was|is)\b"),
        (4, r"\bprice (?:you paid|did you pay|of (?:the|your|that|this) (?:item|product|thing|one))"),
        (4, r"\bpaid for (?:it|the item|the product|that|this)\b|\b(?:item|product)'s (?:price|cost)\b"),
        (3, r"\b(?:value|cost) of (?:the|your|this|that) (?:item|product|purchase)\b"),
        (3, r"\bhow (?:pricey|expensive)\b|\bpurchase price\b|\bprice tag\b|\bretail price\b"),
        (3, r"\b(?:item|product|it|one|thing) cost"),
        (3, r"\b(?:item|product|it|one|thing) (?:was |is |cost )?(?:over|under|more than|less than|above|below|"
            r"at least)\b.*(?:\$\s?\d|\d+ dollars)"),
        (2, r"\bprice\b|\bcost\b|\bpaid\b|\bexpensive\b"),
        (1, r"\bhow much\b"),
    ),
    "card_amount": (
        (4, r"\b(?:amount|value|balance|denomination|worth) (?:of|on|for) (?:the|your|that|this|a) (?:gift )?card\b"),
        (4, r"\b(?:put|putting|add|adding|load|loading|top up|topping up)\b.*\b(?:on|onto|to|in) (?:the|your|a|that) "
            r"(?:gift )?card\b"),
        (4, r"\b(?:how much|what value|what amount|how big)\b.*\bgift ?card|\bgift ?card\b.*\b(?:how much|worth|value|"
            r"amount|for how much)"),
        (3, r"\bgift ?card\b"),
    ),
    "price_gap": (
        (4, r"\bhow much (?:cheaper|lower|less|more|lower is|cheaper is)\b"),
        (4, r"\b(?:cheaper|lower|less) by\b|\bby how much\b"),
        (4, r"\b(?:how (?:big|large)|what) (?:is |'s )?the (?:difference|gap|saving)"),
        (3, r"\bdifference\b.*\bprices?\b|\bprices?\b.*\bdifference\b"),
        (4, r"\b(?:what|how much)(?: is| was|'s| are| do| does) (?:their|the other|the competitor'?s?|the lower|"
            r"the cheaper|that|the competing|the rival) (?:price|offer|store charging|charging|charge)\b"),
        (4, r"\bhow much (?:would|will|do|could|can) you save\b"),
        (3, r"\b(?:lower|cheaper|less) than\b|\btheir price\b|\bcompared? (?:with|to)\b|\bsav(?:e|ing|ings)\b"),
        (2, r"\bcheaper\b|\b(?:lower|better) (?:price|deal|offer)\b|\bdifference\b|\bgap\b"),
    ),
    "competitor_type": (
        (4, rf"\b(?:where|who)\b.*\b{_PRICE_WORDS}\b(?!.*\b(?:how much|by how much)\b)"),
        (4, rf"\b(?:which|what (?:kind|type|sort) of) (?:store|shop|site|website|retailer|seller|place|company|"
            rf"business|one)\b.*\b{_PRICE_WORDS}\b"),
        (3, r"\b(?:other|another|different|rival|competing) (?:store|shop|seller|site|website|retailer|company|place|"
            r"business|merchant)\b"),
        (3, r"\b(?:kind|type|sort) of (?:store|shop|seller|retailer|business|place|site|merchant|outlet)\b"),
        (3, r"\bwho (?:is |was )?(?:selling|sells|offering|offers|has|had)\b"),
        (3, r"\b(?:online|big[- ]box|discount|chain|physical) (?:store|shop|retailer|seller)\b"),
    ),
    "days_since_delivery": (
        (4, _near(_TIME, _DELIVERED)),
        (2, r"\b(?:arriv(?:e|ed)|delivered|receiv(?:e|ed))\b"),
    ),
    "days_since_purchase": (
        (4, rf"^(?!.*\b(?:{_PERIOD})\b).*?(?:{_near(_TIME, _BOUGHT)})"),
        (2, r"\bhow long (?:ago|has it been)\b"),
    ),
    "item_age": (
        (4, r"\bhow long (?:have|had|did) you (?:had|have|owned|own|used|been using|kept|been)\b"),
        (4, r"\b(?:had|owned|used) (?:it|the item|the product|this|that)\b.*\b(?:long|months?|years?)\b"),
        (4, r"\bhow old\b|\bage of (?:the|your|it|this)\b|\bmonths? old\b|\byears? old\b|\b(?:older|newer) than\b|"
            r"\bin months\b|\bpossess|\bfor how long (?:have|had)\b"),
        (4, r"\bhow many (?:months|years)\b"),  # asked in its unit: the one fact counted in months
        (2, r"\bage\b|\bold\b"),
    ),
    "orders_year": (
        (4, r"\b(?:number|count) of (?:orders|purchases|times)\b"),
        (4, r"\bhow many (?:orders|purchases|times)\b|\bhow (?:often|frequently)\b"),
        (4, _near(r"(?:orders?|purchases?|shopped|ordered|bought)", r"(?:past|last|previous|this) (?:year|12 months|"
                                                                   r"twelve months)")),
        (3, r"\b(?:frequent|regular|repeat|loyal) (?:customer|shopper|buyer)\b|\boften\b|\bfrequently\b|"
            r"\bregularly\b"),
        (3, r"\b(?:other|previous|past|prior|earlier) (?:orders|purchases)\b|\bshop(?:ped)? with us\b"),
        (2, r"\b(?:past|last|previous) (?:year|12 months|twelve months)\b|\ba year\b"),
    ),
    "items": (
        (4, r"\bhow many (?:items|things|pieces|products|units|articles|goods|of them|separate|individual|"
            r"different)\b"),
        (4, r"\b(?:number|count|quantity) of (?:items|things|pieces|products|units|articles)\b"),
        (3, r"\bhow many\b(?!.*\b(?:days?|months?|weeks?|years?|orders|times|purchases|pounds|lbs?|dollars)\b)"),
        (3, r"\b(?:one|single|a) (?:item|thing|product|piece) or (?:several|more|multiple|many|a few)\b|"
            r"\b(?:several|multiple) (?:items|things|products|pieces)\b|"
            r"\bmore than one (?:item|thing|product|piece)\b"),
        (2, r"\bitems in (?:the|your) order\b|\bsingle item\b|\bmore than one\b"),
    ),
    "weight": (
        (3, r"\bweigh|\bweight\b|\bheav(?:y|ier|iest)\b|\bpounds?\b|\blbs?\b|\bkilo(?:gram)?s?\b|\bkgs?\b"),
    ),
    "size_class": (
        (3, r"\bhow (?:big|large|bulky|long|wide|tall)\b(?! ago)(?!.*\b(?:have|had|has it been|difference|gap|"
            r"saving|discount|price|order|basket|cart|dollars)\b)"),
        (4, r"\bsize (?:category|class|group|band|tier|type)\b|\b(?:standard|normal|regular|average)[- ]size"),
        (3, r"\b(?:big|large|small|compact|awkward|huge|bulky|fragile|breakable|delicate) (?:item|package|parcel|box|"
            r"thing|product)\b|\bbig or small\b|\bsize of (?:the|your) (?:item|package|parcel|box|product)\b"),
        (2, r"\bsize\b|\bbig\b|\blarge\b|\bsmall\b"),
    ),
    "speed": (
        (4, r"\b(?:which|what) (?:kind of |type of |sort of )?(?:shipping|delivery|postage|service)\b(?! (?:address|"
            r"destination|location|to))"),
        (4, r"\b(?:choose|chose|choosing|pick|picked|select|selected|opt(?:ed)? for|go for|went for|pay for|paid for)"
            r"\b.*\b(?:shipping|delivery|postage)\b(?! (?:address|to))"),
        (4, r"\b(?:shipping|delivery|postage) (?:did|do|will|would) you (?:choose|pick|select|want|use|go)"),
        (3, r"\b(?:standard|faster|fast|quick|quicker|slow|express|priority) (?:shipping|delivery|postage)\b|"
            r"\bhow (?:fast|quick(?:ly)?)\b"),
    ),
    "payment": (
        (4, r"\bhow (?:did|do|will|are|were|would) you (?:pay|paying)\b|\bhow (?:was|is|will) (?:it|this|that|the "
            r"(?:item|order|purchase)) (?:being )?paid\b|\bform of payment\b"),
        (4, r"\b(?:what|which) (?:did you|will you|do you) (?:use to pay|pay with|pay by)\b"),
        (4, r"\b(?:what|which) (?:card|method)\b(?!.*\bgift\b)"),
        (3, r"\bpa(?:y|id|ying) (?:with|by|using|via|through)\b|\bmethod of pay|"
            r"\bpay(?:ing)? (?:method|option|type)\b"),
        (3, r"\b(?:credit|debit|bank|which|what) card\b|\bby card\b|\bcash\b"),
    ),
    "channel": (
        (4, r"\bhow (?:did|do) you (?:order|buy|purchase|place|make|get)\b|\bhow (?:was|is) (?:it|the order|the "
            r"purchase|this) (?:placed|made|bought|purchased|ordered)\b"),
        (4, rf"\bwhere (?:did|do) you (?:order|buy|purchase|place|make|get)\b(?!.*\b{_PRICE_WORDS}\b)"),
        (4, r"\b(?:ordered|bought|purchased|order|buy|purchase) (?:it |this |that )?(?:through|via|on|in|at|over|"
            r"from) (?:the |our |a |one of our )?(?:website|site|web|internet|app|phone|store|shop)\b"),
        (3, r"\b(?:online(?! (?:marketplace|store|shop|retailer|seller))|on the web|on the internet|app|in[- ]store|"
            r"in person|in a store|in the store|in one of our stores|at (?:a|the|one of our) (?:store|shop)|"
            r"physical store|by phone|over the phone|on the phone|phone|call(?:ed)? (?:us|in))\b"),
    ),
    "condition": (
        (4, r"\b(?:state|shape) (?:of|is) (?:the|it|your|this) (?:item|product|thing)\b|\bwhat shape\b|"
            r"\bin (?:good|bad|what|working) (?:shape|order)\b|\bstate is (?:it|the item|the product) in\b"),
        (4, r"\b(?:has|have|was) (?:it|the item|the product|this) (?:been )?(?:used|worn|tried|open)\b(?![- ]box)|"
            r"\bhave you (?:used|worn|tried|opened) (?:it|the item|the product)\b|\bstill (?:works?|working|in "
            r"(?:the|its) (?:box|packaging|wrapping))\b"),
        (3, r"\bopen(?:ed)?\b(?![- ]box)|\bseal(?:ed)?\b|\bpackag(?:ing|e) (?:intact|still)|"
            r"\boriginal (?:packaging|box|wrapping|tags?)\b|\bintact\b|\bmint\b|\b(?:does|do|did) it (?:still )?work\b|"
            r"\bworking\b|\bused it\b"),
    ),
    "reason": (
        (4, r"\bwhy\b|\bwhat(?:'s| is| was) wrong\b|\bwhat made you\b|\bwhat happened\b|\bwhat went wrong\b"),
        (3, r"\b(?:problem|issue|trouble|fault|wrong) with\b|\bwhat(?:'s| is) the (?:problem|issue)\b|\bmotivat|"
            r"\bsending it back\b|\breturning it\b|\b(?:arrive|arrived|came|come|delivered) late\b|\blate delivery\b"),
    ),
    "category": (
        (4, r"\bwhat (?:kind|type|sort) (?:of (?:item|product|thing|goods|merchandise) )?(?:is it|was it|did you|are "
            r"you|is the|was the)\b"),
        (4, r"\bwhat (?:it|the item|the product|the thing) (?:is|was)\b|\bwhat (?:is|was) (?:the item|the product|"
            r"the thing)\b(?!'s| (?:worth|like|for|that|about))|\bwhat (?:product|item) (?:is|was)\b"),
        (4, r"\bwhat (?:did you|are you) (?:buy|order|purchase|get|return|sending back)\w*\b(?! (?:it )?(?:with|for|"
            r"from|through|on))"),
        (3, r"\b(?:electronic|apparel|cloth|garment|shoe|furniture|homeware|household|home goods|toy|beauty|cosmetic|"
            r"makeup|sport|grocer|food|perishable|hygiene|gadget|appliance|kitchen|book)"),
        (3, r"\b(?:kind|type|sort) of (?:item|product|thing|goods|merchandise|purchase)\b"),
    ),
    "region": (
        (4, rf"\bwhere (?:are|do|is|will|would|should|to|'s|are we|am i)\b(?!.*\b(?:{_PRICE_WORDS}|bought|buy\w*|"
            r"ordered|order (?:it|from|through|online)|you order|purchas\w*|see|saw|find|found|get it|got it)\b)"),
        (4, r"\b(?:which|what) state (?:are|do|is|will)\b|\bstate (?:are you|do you live)\b|"
            r"\bwhere you(?:'re| are| live| are based| are located| reside)\b|\bwhere (?:it|the order|the package|"
            r"the parcel|the item|this|we)(?:'s| is| will be| should be| are)? (?:going|headed|heading|sent|shipped|"
            r"delivered|being (?:sent|shipped|delivered)|go|shipping it|sending it)\b"),
        (3, r"\b(?:ship(?:ping|ped)?|send(?:ing)?|sent|deliver(?:ed|y|ing)?|mail(?:ed|ing)?|post(?:ed|ing)?|go(?:ing)?)"
            r" (?:it |this |the (?:item|order|package|parcel) )?to\b(?! (?:you|us|me)\b)"),
        (3, r"\blive\b|\bliving\b|\bbased\b|\blocated\b|\blocation\b|\bcountry\b|\babroad\b|\boverseas\b|"
            r"\binternational(?:ly)?\b|\bdomestic(?:ally)?\b|\bmainland\b|\bcontinental\b|\blower 48\b|"
            r"\b(?:in|within|outside) the (?:us|u\.s\.|usa|united states|country|states)\b|\busa\b|\bu\.s\.|"
            r"\bunited states\b|\bthe us\b"),
    ),
    "tier": (
        (4, r"\b(?:what|which) (?:level|status)\b|\bstatus with us\b"),
        (3, r"\b(?:plus|elite|prime|gold|silver|platinum|basic|bronze)\b|\baccount (?:type|level|status)\b|"
            r"\bperks\b|\bclub\b(?! (?:store|warehouse))|\bsigned up (?:for|to) (?:our|the|a)\b"),
        (2, r"\bstatus\b|\blevel\b"),
    ),
    "season": (
        (4, r"\btime of (?:the )?year\b|\bwhen in the year\b|\b(?:part|time|period|month|season) of the year\b|"
            r"\bwhat (?:time|period|month)\b.*\b(?:buy|bought|purchas\w*|order\w*)\b"),
        (4, r"\b(?:sales?|shopping|buying|promotional|promo) (?:period|season|event|window)\b"),
        (3, r"\bsales?\b|\bon sale\b|\bdiscount(?:ed)? (?:period|event)\b|\bpromo(?:tion|tional)?\b|\bsales? event\b|"
            r"\bthanksgiving\b|\bcyber monday\b|\bnew year\b|\bspecial (?:event|offer|time)\b|\bmarkdown\b"),
    ),
    "item_state": (
        (4, r"\b(?:new|used|refurbished|second[- ]hand) or (?:new|used|refurbished|second[- ]hand)\b|\b(?:buy|bought|"
            r"get|got|purchase[d]?) (?:it )?(?:new|used|refurbished|second[- ]hand)\b"),
        (4, r"\b(?:was|is) (?:it|the item|the product|this) (?:brand )?new\b"),
        (3, r"\b(?:it|item|product|one|thing) (?:was |is )?(?:new|used)\b|\bpre[- ]?owned\b|\breconditioned\b|"
            r"\brenewed\b"),
        (2, r"\bnew\b|\bused\b"),
    ),
    "registered": (
        (3, r"\bsign(?:ed)? (?:it|the product|the item) up\b|\bactivat(?:e|ed)\b|\bwarranty card\b|\bon file\b"),
    ),
}

#: Parts about the customer's situation in general, not one fact ("Could you give me some details?").
_GENERAL = re.compile(
    r"\b(?:details?|situation|circumstances?|information|info|specifics|particulars|background|facts|your case|"
    r"what applies|context|(?:about|regarding|on) (?:the|your|this) (?:order|purchase|item|product|return)|"
    r"more about|anything else|something else|what else|everything|else)\b")


#: The policy's own labels of the facts ("order subtotal"), longest first: a label names its fact,
#: and its words are no cue for another ("days since delivery and purchase period" is no purchase date).
_LABELS = re.compile("|".join(rf"(?<![a-z0-9]){re.escape(s.label)}(?![a-z0-9])"
                              for s in sorted(SLOTS.values(), key=lambda s: -len(s.label))))
_BY_LABEL = {s.label: key for key, s in SLOTS.items()}


@functools.cache
def _names() -> dict[str, re.Pattern[str]]:
    """Every slot's keywords and choices: words that name the fact wherever they appear."""
    out = {}
    for key, slot in SLOTS.items():
        named = [rf"(?<![a-z0-9])(?:{'|'.join(re.escape(w.lower()) for w in slot.keywords)})"]
        if slot.choices:  # whole values: "standard" shipping is not a "standard-size" item
            named.append(rf"(?<![a-z0-9-])(?:{'|'.join(re.escape(c.lower()) for c in slot.choices)})(?![a-z0-9-])")
        out[key] = re.compile("|".join(named))
    return out


@functools.cache
def _rules() -> dict[str, tuple[tuple[int, re.Pattern[str]], ...]]:
    """Every slot's rules past its label, strongest first: its names (3), then `_CUES`."""
    out = {}
    for key, names in _names().items():
        rules = [(3, names), *((strength, re.compile(p)) for strength, p in _CUES.get(key, ()))]
        out[key] = tuple(sorted(rules, key=lambda r: -r[0]))
    return out


#: Facts whose questions share words ("how much", "when", "where", "what state"): within a group
#: only the strongest reading of a part counts, so "how much does the order come to" is the subtotal
#: and not also the item price. Facts of different groups may be asked in one breath
#: ("how old it is, whether it's registered").
RIVALS: tuple[frozenset[str], ...] = (
    frozenset({"subtotal", "item_price", "card_amount", "price_gap", "items", "orders_year"}),
    frozenset({"days_since_delivery", "days_since_purchase", "item_age", "season"}),
    frozenset({"region", "channel", "competitor_type"}),
    frozenset({"condition", "item_state", "category", "size_class", "reason"}),
)
_GROUP = {key: group for group in RIVALS for key in group}


def slots_named(part: str) -> tuple[list[str], bool]:
    """The slots a lower-cased part asks about: the strongest reading among rivals, and from other
    groups any specific one (tier 3 or 4; weaker cues count only when nothing stronger matched).
    The flag says whether the reading is sure (tier 3 or 4) rather than a guess from a weak cue."""
    best = {_BY_LABEL[m.group(0)]: 4 for m in _LABELS.finditer(part)}
    rest = _LABELS.sub(" , ", part)
    for key, rules in _rules().items():
        strength = next((s for s, pattern in rules if pattern.search(rest)), 0)
        if strength > best.get(key, 0):
            best[key] = strength
    if not best:
        return [], False
    # a fact named by its own label or words is asked whatever its rivals match ("which department
    # it's from and the size class"); rivalry settles only phrasings that need context
    named = {k for k, pattern in _names().items() if pattern.search(rest)} | {_BY_LABEL[m.group(0)] for m in _LABELS.finditer(part)}
    top = max(best.values())
    return [k for k, s in best.items() if s >= min(top, 3)
            and (k in named and s >= 3 or s == max(best.get(r, 0) for r in _GROUP.get(k, {k})))], top >= 3


#: Prototype questions per fact for the embedding fallback (content words only count).
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "subtotal": ("order subtotal", "order total amount", "how much the whole order cost altogether"),
    "weight": ("package weight", "how heavy the parcel is"),
    "items": ("number of items in the order", "how many products pieces units"),
    "days_since_delivery": ("days since the package was delivered", "how long ago did the parcel arrive"),
    "days_since_purchase": ("days since purchase", "how long ago did you buy it"),
    "item_price": ("item price", "how much the product cost"),
    "price_gap": ("price difference competitor cheaper", "how much lower the other price is"),
    "item_age": ("item age in months", "how long have you owned it"),
    "orders_year": ("orders placed in the past year", "how often you shop with us"),
    "card_amount": ("gift card amount loaded", "gift card value"),
    "tier": ("membership tier", "loyalty rewards program member level"),
    "size_class": ("size class oversized bulky fragile", "how big the item is"),
    "speed": ("shipping speed option", "express overnight standard delivery chosen"),
    "payment": ("payment method", "paid with credit card debit card paypal"),
    "channel": ("purchase channel website app store phone", "where you placed the order online"),
    "condition": ("item condition opened damaged defective", "still sealed in original packaging"),
    "reason": ("return reason", "why you are returning it"),
    "category": ("product department category", "what kind of product electronics clothing toys"),
    "region": ("shipping destination address", "where you live country state"),
    "season": ("purchase period holiday season sale", "time of year bought black friday clearance"),
    "competitor_type": ("competitor type retailer marketplace", "which store sells it cheaper"),
    "item_state": ("bought brand new refurbished open-box", "new or second-hand"),
    "registered": ("product registration status", "registered the product with the maker"),
}
PARAPHRASES = Paraphrases(PROTOTYPES, threshold=0.3, margin=0.1)

#: Words of a shopper's situation: a part without any (and no fact placed) is about something else
#: ("What's the weather like?"), which the customer says it does not see the point of.
_SITUATION = re.compile(
    r"\b(?:order\w*|item|items|product|products|thing|things|package|parcel|box|purchas\w*|buy\w*|bought|ship\w*|"
    r"deliver\w*|send\w*|sent|return\w*|refund\w*|exchang\w*|price\w*|cost\w*|pa(?:y|id|ying|yment)|card|"
    r"member\w*|account|store|shop\w*|policy|policies|warranty|discount\w*|fee|fees|credit|money|amount|dollars?|"
    r"receipt|sale|sales|arriv\w*|receiv\w*|total|sum|spen[dt]|worth|value|bill|invoice|checkout|basket|cart|"
    r"brand|model|condition|damage\w*|broken|size|weigh\w*|heavy|address|live|located|country|state|city|zip|"
    r"postcode|how much|how many|how long|how old|why|which one|details?|situation|case|circumstances?|"
    r"information|info|it|this|that|one)\b")


@dataclass(frozen=True)
class Reading:
    """What a message asks of the customer.

    `slots`: the facts it asks about, in order. `unmapped`: a part asked something the
    customer could not place, or placed only by a guess (a weak cue, a paraphrase's likeness). `general`: a part asked about the situation as a whole.
    `check_in`: the message only checks in ("Does that sound good?", "Anything else?").
    `unrelated`: it only asked about things outside the customer's situation.
    """

    slots: tuple[str, ...] = ()
    unmapped: bool = False
    general: bool = False
    check_in: bool = False
    unrelated: bool = False  # every part asked about something outside the customer's situation


#: Words of small talk and wrapping up: a part made of these alone ("All good?", "Ready to wrap up?")
#: is a check-in the rules did not recognise, not a question about something else.
_CLOSING = frozenset("""
good fine great happy satisfied clear set done sense helpful sorted settled cool ready wrap finished complete
completed covered resolved answered alright work works worked sound sounds else further today need needs want
wants going move moving go end close closing finish wrapping doing thanks thank glad hear understood understand
enough ok okay right anything everything something today's questions question
""".split())


#: A part that asks about something named elsewhere ("what is it?", "could you share that?").
_REFERS = re.compile(r"\b(?:what|which|how|when|where|who|why|it|that|this|those|them)\b")


def _closing(part: str) -> bool:
    words = content_words(part)
    return bool(words) and all(w in _CLOSING for w in words) and not _GENERAL.search(part)


def read_question(text: str) -> Reading:
    """Read an agent's request part by part (see the module docstring)."""
    slots: list[str] = []
    unmapped = general = False
    checks = requests = unrelated = 0
    statement: list[str] = []  # what the last statement named: a bare "Could you share that?" asks for it
    statement_general = False
    for part in request_parts(text):
        named, sure = slots_named(part.text)
        if not part.request:
            statement, statement_general = named, bool(_GENERAL.search(part.text))
            continue
        after_request = requests > 0
        requests += 1
        if (not named or not sure) and (is_check_in(part.text) or _closing(part.text)):
            checks += 1
            continue
        if not named and not content_words(part.text):
            if after_request and _REFERS.search(part.text):  # "... and what is it?": which fact, unclear
                unmapped = True
            else:  # "Could you share that?", "Can you help?": about the statement before it
                named, general = statement, general or statement_general
        elif not named and _GENERAL.search(part.text):
            general = True
        elif not named:
            nearest = PARAPHRASES.nearest(part.text)
            named = [nearest] if nearest else []
            if not named and not _SITUATION.search(part.text):
                unrelated += 1
            else:  # placed by a paraphrase's likeness at best: a guess
                unmapped = True
        elif not sure:  # placed by a weak cue ("how much"): answered, but only a guess
            unmapped = True
        slots += [k for k in named if k not in slots]
    return Reading(tuple(slots), unmapped, general, check_in=requests > 0 and checks == requests,
                   unrelated=requests > 0 and unrelated == requests)
