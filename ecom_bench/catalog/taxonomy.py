"""The synthetic catalogue's taxonomy: categories, brands, attributes, features, lines.

Pure data plus two small frozen dataclasses. Ten top categories, each with 6-8 leaf
categories on a 3-level path ("Electronics" > "Chargers & Power" > "Wall Chargers").
A leaf carries the product noun used in titles ("Wall Charger"), a price range, the
attributes its products have together with their value pools, feature phrases and a
short "made for ..." use phrase for descriptions. Brand names and product-line
syllables are invented but plausible; none is meant to be a real trademark.

Everything here is plain immutable data: importing it is cheap and it never changes
between processes, so the generator built on it is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

# --------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class Leaf:
    """A leaf category and everything needed to write products for it."""

    path: tuple[str, str, str]
    noun: str  # what the product is called in its title: "Wall Charger"
    price_range: tuple[float, float]  # (low, high) in dollars, log-uniform between
    attributes: tuple[tuple[str, tuple[str, ...]], ...]  # ordered (attribute, value pool)
    features: tuple[str, ...]  # feature phrases (title tail, bullet points)
    use: str  # "charging phones, tablets and laptops" (description sentence)
    title_attrs: tuple[str, ...]  # attributes shown in the title's spec part, in order

    @property
    def top(self) -> str:
        return self.path[0]

    @property
    def name(self) -> str:
        return self.path[-1]

    @cached_property
    def pools(self) -> dict[str, tuple[str, ...]]:
        return dict(self.attributes)

    @property
    def attribute_names(self) -> tuple[str, ...]:
        return tuple(a for a, _ in self.attributes)


@dataclass(frozen=True)
class TopCategory:
    name: str
    brands: tuple[str, ...]
    line_prefixes: tuple[str, ...]  # product-line syllables: prefix + suffix = "PowerPort"
    line_suffixes: tuple[str, ...]
    extra_features: tuple[str, ...]  # category-wide bullet points ("Machine Washable")
    leaves: tuple[Leaf, ...]

    @cached_property
    def product_lines(self) -> tuple[str, ...]:
        return product_lines(self)


def _leaf(
    path: tuple[str, str, str],
    noun: str,
    price: tuple[float, float],
    attributes: dict[str, tuple[str, ...]],
    features: tuple[str, ...],
    use: str,
    title_attrs: tuple[str, ...],
) -> Leaf:
    for a in title_attrs:
        if a not in attributes:
            raise ValueError(f"{path}: title attribute {a!r} is not an attribute of the leaf")
    return Leaf(
        path,
        noun,
        price,
        tuple((k, tuple(v)) for k, v in attributes.items()),
        tuple(features),
        use,
        tuple(title_attrs),
    )


# --------------------------------------------------------------------- shared pools

APPAREL_SIZES = ("XS", "S", "M", "L", "XL", "XXL")
APPAREL_COLORS = ("Black", "White", "Heather Gray", "Navy", "Olive", "Burgundy", "Charcoal", "Dusty Rose",
                  "Sky Blue", "Forest Green")
DEVICE_COLORS = ("Black", "White", "Space Gray", "Silver", "Midnight Blue")
HOME_COLORS = ("Black", "White", "Gray", "Sage Green", "Cream", "Navy", "Red")
FINISH_COLORS = ("Chrome", "Matte Black", "Brushed Nickel", "Oil-Rubbed Bronze", "Brushed Gold")

# --------------------------------------------------------------------- categories

ELECTRONICS = TopCategory(
    name="Electronics",
    brands=("VoltEdge", "SonicWave", "Lumetrix", "NexaCharge", "Ampora", "Corvex", "Zentrik", "Heliox",
            "Kyvon", "Braxa"),
    line_prefixes=("Power", "Volt", "Amp", "Nova", "Sonic", "Pulse", "Quantum", "Flux", "Nexa", "Echo", "Ion",
                   "Astra", "Bolt", "Hyper"),
    line_suffixes=("Port", "Charge", "Max", "Link", "Wave", "Boost", "Core", "Beam", "Sync", "Cell", "Dock",
                   "Tek", "Volt", "Arc"),
    extra_features=("18-Month Warranty", "Compact Design", "Universal Compatibility", "Safety Certified"),
    leaves=(
        _leaf(("Electronics", "Chargers & Power", "Wall Chargers"), "Wall Charger", (9, 59),
              {"connector_type": ("USB-C", "Lightning", "Micro-USB", "USB-A"),
               "wattage": ("20W", "30W", "45W", "65W", "100W", "140W"),
               "color": ("White", "Black", "Gray")},
              ("GaN Fast Charging", "Foldable Plug", "Dual Port Output", "Overheat Protection",
               "PD 3.0 Compatible", "Travel Ready Size", "Smart Power Allocation"),
              "charging phones, tablets and laptops", ("wattage", "connector_type")),
        _leaf(("Electronics", "Chargers & Power", "Power Banks"), "Power Bank", (15, 89),
              {"connector_type": ("USB-C", "Lightning", "Micro-USB", "USB-A"),
               "capacity": ("5000mAh", "10000mAh", "20000mAh", "26800mAh"),
               "wattage": ("15W", "22.5W", "45W", "65W"),
               "color": DEVICE_COLORS},
              ("LED Battery Display", "Slim Portable Design", "Pass-Through Charging", "Airline Approved",
               "Fast Recharge", "Multi-Device Output", "Built-In Cable"),
              "keeping your devices charged on the go", ("capacity", "wattage")),
        _leaf(("Electronics", "Cables & Adapters", "Charging Cables"), "Charging Cable", (6, 29),
              {"connector_type": ("USB-C", "Lightning", "Micro-USB", "USB-C to Lightning", "USB-A to USB-C"),
               "length": ("3 ft", "6 ft", "10 ft"),
               "color": ("Black", "White", "Gray", "Red")},
              ("Braided Nylon Jacket", "Fast Charge Support", "480Mbps Data Sync", "Reinforced Strain Relief",
               "Tangle-Free Design", "20,000+ Bend Lifespan"),
              "charging and syncing your phone, tablet or laptop", ("length", "connector_type")),
        _leaf(("Electronics", "Cables & Adapters", "USB Hubs"), "USB Hub", (12, 69),
              {"connector_type": ("USB-C", "USB-A", "Thunderbolt 4"),
               "port_count": ("4-Port", "7-Port", "10-Port"),
               "color": ("Space Gray", "Silver", "Black")},
              ("4K HDMI Output", "100W Pass-Through Charging", "SD Card Reader", "Aluminum Housing",
               "Plug and Play", "5Gbps Data Transfer"),
              "expanding the ports of laptops and desktops", ("port_count", "connector_type")),
        _leaf(("Electronics", "Headphones & Audio", "Wireless Earbuds"), "Wireless Earbuds", (19, 199),
              {"color": ("Black", "White", "Navy", "Sage Green", "Rose Gold"),
               "battery_life": ("24 Hours", "30 Hours", "40 Hours", "50 Hours")},
              ("Active Noise Cancelling", "Bluetooth 5.3", "IPX5 Sweat Resistant", "Deep Bass Drivers",
               "Touch Controls", "Wireless Charging Case", "Low-Latency Game Mode"),
              "music, calls and workouts", ("battery_life", "color")),
        _leaf(("Electronics", "Headphones & Audio", "Bluetooth Speakers"), "Bluetooth Speaker", (19, 149),
              {"color": ("Black", "Blue", "Red", "Teal", "Gray"),
               "wattage": ("10W", "20W", "30W", "40W")},
              ("IPX7 Waterproof", "360 Degree Sound", "24-Hour Playtime", "Stereo Pairing",
               "Built-In Microphone", "Rugged Outdoor Design"),
              "parties, the beach and everyday listening", ("wattage", "color")),
        _leaf(("Electronics", "Computer Accessories", "Keypads"), "Keypad", (12, 45),
              {"connector_type": ("USB-C", "USB-A", "Bluetooth", "2.4GHz Wireless"),
               "color": ("Black", "White", "Silver")},
              ("Low-Profile Scissor Keys", "Rechargeable Battery", "Spill-Resistant Design", "Plug and Play",
               "Quiet Typing", "Multi-OS Compatible"),
              "fast number entry at a desk or on the go", ("connector_type", "color")),
        _leaf(("Electronics", "Computers & Displays", "Monitors"), "Monitor", (99, 499),
              {"screen_size": ("22 Inch", "24 Inch", "27 Inch", "32 Inch"),
               "resolution": ("1080p", "1440p", "4K UHD"),
               "refresh_rate": ("75Hz", "144Hz", "165Hz")},
              ("IPS Panel", "Ultra-Thin Bezels", "Eye Care Flicker-Free", "Adaptive Sync", "VESA Mountable",
               "HDR10 Support", "Height Adjustable Stand"),
              "work, gaming and streaming", ("resolution", "refresh_rate", "screen_size")),
    ),
)

CLOTHING = TopCategory(
    name="Clothing",
    brands=("NorthLoom", "Urban Thread", "Kestrel & Co", "Mavenwear", "Solstice Apparel", "Fieldstone",
            "Tidewell", "Ravelle", "Copperline", "Everpine"),
    line_prefixes=("Aero", "Cloud", "Flex", "Urban", "Trail", "Soft", "Air", "Motion", "Luxe", "Breeze",
                   "Stride", "Pure", "Coast", "Drift"),
    line_suffixes=("Knit", "Flex", "Fit", "Weave", "Luxe", "Move", "Form", "Layer", "Dry", "Stretch", "Lite",
                   "Cotton", "Tech", "Core"),
    extra_features=("Machine Washable", "Tag-Free Label", "Preshrunk Fabric", "Relaxed Fit"),
    leaves=(
        _leaf(("Clothing", "Men's Clothing", "T-Shirts"), "Crew Neck T-Shirt", (9, 35),
              {"size": APPAREL_SIZES,
               "color": APPAREL_COLORS,
               "material": ("Cotton", "Cotton Blend", "Polyester", "Modal")},
              ("Breathable Jersey Knit", "Short Sleeve", "Double-Stitched Hems", "Soft Hand Feel",
               "Everyday Classic Fit", "Moisture Wicking"),
              "everyday wear and layering", ("material", "color")),
        _leaf(("Clothing", "Women's Clothing", "Tank Tops"), "Tank Top", (8, 29),
              {"size": APPAREL_SIZES,
               "color": APPAREL_COLORS,
               "material": ("Cotton", "Rayon Blend", "Polyester", "Ribbed Cotton")},
              ("Racerback Cut", "Lightweight Stretch", "Quick Dry", "Scoop Neck", "Layering Essential",
               "Moisture Wicking"),
              "workouts, warm days and layering", ("material", "color")),
        _leaf(("Clothing", "Women's Clothing", "Leggings"), "High Waist Leggings", (14, 49),
              {"size": APPAREL_SIZES,
               "color": ("Black", "Navy", "Charcoal", "Olive", "Plum", "Mocha"),
               "material": ("Nylon Spandex", "Polyester Spandex", "Cotton Spandex")},
              ("Squat-Proof Fabric", "Hidden Waistband Pocket", "Four-Way Stretch", "Tummy Control",
               "Buttery Soft Feel", "Ankle Length"),
              "yoga, running and lounging", ("material", "color")),
        _leaf(("Clothing", "Men's Clothing", "Hoodies"), "Pullover Hoodie", (19, 69),
              {"size": APPAREL_SIZES,
               "color": APPAREL_COLORS,
               "material": ("Cotton Fleece", "Polyester Fleece", "French Terry")},
              ("Kangaroo Pocket", "Lined Hood with Drawstring", "Ribbed Cuffs", "Brushed Fleece Interior",
               "Midweight Warmth", "Relaxed Silhouette"),
              "cool evenings and casual weekends", ("material", "color")),
        _leaf(("Clothing", "Men's Clothing", "Jeans"), "Slim Fit Jeans", (24, 89),
              {"size": ("28W x 30L", "30W x 32L", "32W x 32L", "34W x 32L", "36W x 34L", "38W x 34L"),
               "color": ("Dark Wash", "Medium Wash", "Light Wash", "Black", "Gray"),
               "material": ("Stretch Denim", "Rigid Denim", "Organic Cotton Denim")},
              ("Five-Pocket Styling", "Comfort Stretch", "Tapered Leg", "Zip Fly", "Fade Resistant",
               "Reinforced Seams"),
              "work, weekends and everything in between", ("material", "color")),
        _leaf(("Clothing", "Accessories", "Socks"), "Crew Socks", (9, 29),
              {"size": ("S", "M", "L", "XL"),
               "pack_size": ("3 Pairs", "6 Pairs", "12 Pairs"),
               "color": ("Black", "White", "Gray", "Assorted")},
              ("Cushioned Sole", "Arch Support", "Reinforced Heel and Toe", "Breathable Mesh Zones",
               "Odor Control", "No-Slip Cuff"),
              "sports, hiking and daily comfort", ("pack_size", "color")),
        _leaf(("Clothing", "Shoes", "Running Shoes"), "Running Shoes", (39, 149),
              {"size": ("US 6", "US 7", "US 8", "US 9", "US 10", "US 11", "US 12", "US 13"),
               "color": ("Black", "White", "Gray", "Navy", "Neon Green", "Coral")},
              ("Responsive Foam Midsole", "Breathable Knit Upper", "Durable Rubber Outsole",
               "Lightweight Build", "Padded Collar", "Reflective Details"),
              "road running, gym sessions and walking", ("color",)),
        _leaf(("Clothing", "Women's Clothing", "Rain Jackets"), "Rain Jacket", (29, 119),
              {"size": APPAREL_SIZES,
               "color": ("Black", "Navy", "Yellow", "Olive", "Red", "Teal")},
              ("Waterproof Shell", "Packable Design", "Adjustable Hood", "Sealed Seams", "Zippered Pockets",
               "Breathable Lining"),
              "rainy commutes and outdoor trips", ("color",)),
    ),
)

HOME_KITCHEN = TopCategory(
    name="Home & Kitchen",
    brands=("Hearthstone", "Copperleaf", "Oakhaven", "Culina", "Brightnest", "Sagewood", "Ferro & Co",
            "Pantryline", "Homevale", "Kettlebrook"),
    line_prefixes=("Chef", "Hearth", "Pure", "Fresh", "Crisp", "Oak", "Sage", "Copper", "Home", "Easy",
                   "Slate", "Terra", "Maple", "Stone"),
    line_suffixes=("Pro", "Craft", "Cook", "Nest", "Ware", "Chef", "Select", "Mate", "Fresh", "Line", "Works",
                   "Ease", "Haven", "Glow"),
    extra_features=("Dishwasher Safe", "Easy to Clean", "Space-Saving Design", "Gift Ready Packaging"),
    leaves=(
        _leaf(("Home & Kitchen", "Kitchen Appliances", "Air Fryers"), "Air Fryer", (49, 179),
              {"material": ("Stainless Steel", "Ceramic", "Activated Carbon", "Bamboo", "Nonstick Coated"),
               "capacity": ("2 Qt", "4 Qt", "5.8 Qt", "8 Qt"),
               "wattage": ("1200W", "1500W", "1700W"),
               "color": ("Black", "White", "Gray", "Sage Green")},
              ("Oil-Free Frying", "Digital Touch Screen", "8 Cooking Presets", "Shake Reminder",
               "Odor Filter Window", "Auto Shutoff", "Rapid Air Circulation"),
              "crispy meals with little or no oil", ("capacity", "wattage")),
        _leaf(("Home & Kitchen", "Cookware", "Frying Pans"), "Frying Pan", (15, 89),
              {"material": ("Stainless Steel", "Cast Iron", "Ceramic", "Hard-Anodized Aluminum",
                            "Carbon Steel"),
               "size": ("8 Inch", "10 Inch", "12 Inch")},
              ("Induction Compatible", "Oven Safe to 500F", "Stay-Cool Handle", "PFOA-Free Coating",
               "Even Heat Distribution", "Riveted Handle"),
              "searing, sauteing and everyday cooking", ("size",)),
        _leaf(("Home & Kitchen", "Kitchen Utensils", "Cutting Boards"), "Cutting Board", (12, 59),
              {"material": ("Bamboo", "Acacia Wood", "Walnut", "Teak", "BPA-Free Plastic"),
               "size": ("Small", "Medium", "Large", "Extra Large")},
              ("Juice Groove", "Non-Slip Feet", "Reversible Surface", "Knife Friendly", "Built-In Handles",
               "Pre-Oiled Finish"),
              "meal prep and serving", ("size",)),
        _leaf(("Home & Kitchen", "Water Filtration", "Water Filter Pitchers"),
              "Water Filter Pitcher", (19, 59),
              {"material": ("Activated Carbon", "Coconut Shell Carbon", "Bamboo Charcoal", "Ceramic"),
               "capacity": ("6 Cup", "10 Cup", "18 Cup")},
              ("Reduces Chlorine Taste", "BPA-Free Reservoir", "Filter Change Indicator",
               "Fits in Fridge Door", "Fast Flow Filter", "Easy-Fill Lid"),
              "cleaner-tasting drinking water at home", ("capacity",)),
        _leaf(("Home & Kitchen", "Drinkware", "Travel Mugs"), "Travel Mug", (12, 39),
              {"material": ("Stainless Steel", "Ceramic", "Glass", "BPA-Free Plastic"),
               "capacity": ("12 oz", "16 oz", "20 oz", "30 oz"),
               "color": HOME_COLORS},
              ("Leak-Proof Lid", "Double-Wall Insulation", "Keeps Hot 6 Hours", "Fits Cup Holders",
               "Sweat-Free Exterior", "One-Hand Sip Lid"),
              "coffee and tea on the commute", ("capacity", "color")),
        _leaf(("Home & Kitchen", "Storage & Organization", "Food Storage Containers"),
              "Food Storage Containers", (14, 59),
              {"material": ("Glass", "BPA-Free Plastic", "Stainless Steel", "Silicone"),
               "pack_size": ("Set of 5", "Set of 10", "Set of 24")},
              ("Airtight Snap Lids", "Microwave Safe", "Freezer Safe", "Stackable Design", "Leak-Proof Seal",
               "Meal Prep Ready"),
              "leftovers, lunches and pantry storage", ("pack_size",)),
        _leaf(("Home & Kitchen", "Bedding", "Sheet Sets"), "Sheet Set", (25, 129),
              {"material": ("Cotton", "Microfiber", "Bamboo", "Linen", "Egyptian Cotton"),
               "size": ("Twin", "Full", "Queen", "King", "California King"),
               "color": ("White", "Ivory", "Light Gray", "Navy", "Sage", "Blush")},
              ("Deep Pocket Fitted Sheet", "Breathable Weave", "Wrinkle Resistant", "Fade Resistant",
               "Hypoallergenic", "Includes 2 Pillowcases"),
              "a cool, comfortable night's sleep", ("size", "color")),
    ),
)

BEAUTY = TopCategory(
    name="Beauty",
    brands=("Velora", "Glowmint", "Petalis", "Aurelle", "Dermavie", "Silkora", "Bloomfield Botanics",
            "Nuvessa", "Rosette Lab", "Clarique"),
    line_prefixes=("Glow", "Silk", "Velvet", "Rose", "Dew", "Luma", "Pure", "Bloom", "Aura", "Vita", "Petal",
                   "Radiant", "Satin", "Honey"),
    line_suffixes=("Glow", "Silk", "Essence", "Veil", "Touch", "Bloom", "Care", "Luxe", "Dew", "Ritual",
                   "Balm", "Tint", "Drop", "Pure"),
    extra_features=("Cruelty-Free", "Dermatologist Tested", "Paraben-Free", "Vegan Formula"),
    leaves=(
        _leaf(("Beauty", "Skin Care", "Face Moisturizers"), "Face Moisturizer", (9, 59),
              {"item_form": ("Cream", "Gel", "Lotion", "Balm"),
               "capacity": ("1.7 oz", "2.5 oz", "3.4 oz")},
              ("Hyaluronic Acid", "Non-Comedogenic", "24-Hour Hydration", "Fragrance-Free",
               "Lightweight Texture", "Ceramide Complex"),
              "soft, hydrated skin morning and night", ("capacity",)),
        _leaf(("Beauty", "Skin Care", "Sunscreens"), "Sunscreen", (8, 34),
              {"item_form": ("Lotion", "Spray", "Stick", "Gel"),
               "spf": ("SPF 30", "SPF 50", "SPF 70"),
               "capacity": ("3 oz", "5 oz", "6 oz")},
              ("Broad Spectrum Protection", "Water Resistant 80 Minutes", "Reef-Friendly Formula",
               "Non-Greasy Finish", "Mineral Based", "No White Cast"),
              "sun protection at the beach and every day", ("spf", "capacity")),
        _leaf(("Beauty", "Hair Care", "Shampoos"), "Shampoo", (7, 32),
              {"scent": ("Coconut", "Tea Tree", "Lavender", "Argan Oil", "Citrus", "Unscented"),
               "capacity": ("8 fl oz", "12 fl oz", "16.9 fl oz", "33.8 fl oz")},
              ("Sulfate-Free", "Color Safe", "Moisturizing Formula", "Scalp Soothing", "Adds Volume",
               "Salon Quality"),
              "clean, healthy-looking hair", ("capacity",)),
        _leaf(("Beauty", "Bath & Body", "Body Washes"), "Body Wash", (6, 24),
              {"scent": ("Eucalyptus Mint", "Vanilla", "Ocean Breeze", "Shea Butter", "Cucumber",
                         "Unscented"),
               "capacity": ("12 fl oz", "18 fl oz", "24 fl oz")},
              ("Rich Lather", "pH Balanced", "Moisturizing Shea", "Gentle on Sensitive Skin",
               "Plant-Based Cleansers", "Long-Lasting Scent"),
              "a refreshing daily shower", ("capacity",)),
        _leaf(("Beauty", "Makeup", "Lipsticks"), "Matte Lipstick", (6, 29),
              {"color": ("Ruby Red", "Nude Beige", "Berry", "Coral", "Mauve", "Classic Red", "Plum"),
               "item_form": ("Bullet", "Liquid", "Crayon")},
              ("Long-Wearing Color", "Transfer-Resistant", "Vitamin E Enriched", "Highly Pigmented",
               "Smooth Glide Application", "Non-Drying Formula"),
              "bold, lasting color", ("item_form",)),
        _leaf(("Beauty", "Fragrance", "Eau de Parfum"), "Eau de Parfum", (24, 129),
              {"scent": ("Floral", "Woody", "Citrus", "Amber", "Fresh Aquatic", "Vanilla"),
               "capacity": ("1 fl oz", "1.7 fl oz", "3.4 fl oz")},
              ("Long-Lasting Sillage", "Elegant Glass Bottle", "Layered Top Notes",
               "Travel Atomizer Included", "Unisex Blend", "Fine Mist Spray"),
              "day-to-night wear and special occasions", ("capacity",)),
        _leaf(("Beauty", "Tools & Accessories", "Makeup Brush Sets"), "Makeup Brush Set", (9, 45),
              {"color": ("Rose Gold", "Black", "Champagne", "Marble White"),
               "pack_size": ("8 Pieces", "12 Pieces", "16 Pieces"),
               "material": ("Synthetic Bristles", "Vegan Fibers", "Taklon")},
              ("Dense Soft Bristles", "Travel Case Included", "Shed-Free", "Ergonomic Handles",
               "For Powder and Liquid", "Easy to Clean"),
              "flawless foundation, blush and eye looks", ("pack_size",)),
    ),
)

SPORTS = TopCategory(
    name="Sports & Outdoors",
    brands=("TrailForge", "Summitex", "Ironpeak", "Alpenrock", "Stridewell", "Vantix", "Ridgeback Gear",
            "Kinetik", "Bluecrest Outdoors", "Tundra Ridge"),
    line_prefixes=("Trail", "Summit", "Peak", "Ridge", "Apex", "Iron", "Swift", "Storm", "Alpine", "Titan",
                   "Rapid", "Canyon", "Glacier", "Vertex"),
    line_suffixes=("Trek", "Grip", "Fit", "Pro", "Force", "Shield", "Dash", "Flex", "Camp", "Zone", "Max",
                   "Rush", "Pack", "Line"),
    extra_features=("Lifetime Warranty", "Carry Bag Included", "Tested Outdoors", "Lightweight Build"),
    leaves=(
        _leaf(("Sports & Outdoors", "Fitness", "Yoga Mats"), "Yoga Mat", (15, 79),
              {"color": ("Purple", "Teal", "Black", "Gray", "Coral", "Ocean Blue"),
               "material": ("TPE", "NBR Foam", "Natural Rubber", "Cork", "PVC"),
               "thickness": ("4mm", "6mm", "8mm", "10mm")},
              ("Non-Slip Texture", "Extra Cushioning", "Alignment Lines", "Carrying Strap", "Sweat Resistant",
               "Eco-Friendly Materials"),
              "yoga, pilates and floor workouts", ("thickness", "material")),
        _leaf(("Sports & Outdoors", "Fitness", "Resistance Bands"), "Resistance Bands", (9, 39),
              {"color": ("Multicolor", "Black", "Pink", "Blue"),
               "pack_size": ("Set of 3", "Set of 5", "Set of 11"),
               "resistance_level": ("Light", "Medium", "Heavy", "Extra Heavy")},
              ("Snap-Resistant Latex", "Door Anchor Included", "Cushioned Handles", "Ankle Straps",
               "Workout Guide", "Travel Pouch"),
              "strength training at home or on the road", ("pack_size", "resistance_level")),
        _leaf(("Sports & Outdoors", "Fitness", "Dumbbells"), "Dumbbell", (14, 99),
              {"weight": ("5 lb", "10 lb", "15 lb", "20 lb", "25 lb", "30 lb"),
               "material": ("Neoprene", "Cast Iron", "Rubber Coated", "Hex Rubber")},
              ("Anti-Roll Hex Shape", "Knurled Grip Handle", "Floor-Friendly Coating", "Color-Coded Weight",
               "Low Odor", "Sold Individually"),
              "home gym strength and toning workouts", ("material",)),
        _leaf(("Sports & Outdoors", "Outdoor Recreation", "Water Bottles"),
              "Insulated Water Bottle", (14, 49),
              {"capacity": ("18 oz", "24 oz", "32 oz", "40 oz", "64 oz"),
               "color": ("Black", "White", "Slate", "Seafoam", "Coral", "Forest"),
               "material": ("Stainless Steel", "Tritan Plastic", "Borosilicate Glass")},
              ("Cold 24 Hours", "Leak-Proof Straw Lid", "Powder-Coated Finish", "Wide Mouth Opening",
               "BPA-Free", "Sweat-Proof"),
              "hydration at the gym, the office or the trail", ("material", "color")),
        _leaf(("Sports & Outdoors", "Camping & Hiking", "Camping Tents"), "Camping Tent", (49, 299),
              {"capacity": ("2-Person", "4-Person", "6-Person", "8-Person"),
               "color": ("Green", "Orange", "Gray", "Blue"),
               "season_rating": ("Summer", "3-Season", "4-Season")},
              ("Waterproof Rainfly", "Quick Setup Poles", "Mesh Ventilation Windows", "Taped Floor Seams",
               "Gear Loft", "Storage Pockets"),
              "camping, festivals and backyard nights", ("season_rating",)),
        _leaf(("Sports & Outdoors", "Camping & Hiking", "Sleeping Bags"), "Sleeping Bag", (29, 159),
              {"size": ("Regular", "Long", "Wide"),
               "temperature_rating": ("20 Degree F", "30 Degree F", "40 Degree F"),
               "color": ("Navy", "Olive", "Red", "Gray")},
              ("Compression Sack Included", "Draft Tube Zipper", "Mummy Hood", "Water-Resistant Shell",
               "Machine Washable", "Soft Brushed Lining"),
              "camping, backpacking and sleepovers", ("temperature_rating",)),
        _leaf(("Sports & Outdoors", "Cycling", "Bike Helmets"), "Bike Helmet", (24, 119),
              {"size": ("S", "M", "L", "XL"),
               "color": ("Matte Black", "White", "Red", "Blue", "Lime")},
              ("MIPS Protection", "Adjustable Dial Fit", "Rear LED Light", "Removable Visor", "16 Vents",
               "CPSC Certified"),
              "road, commuter and trail riding", ("color",)),
    ),
)

TOYS = TopCategory(
    name="Toys & Games",
    brands=("Wonderbloc", "Jollyjam", "Pip & Pogo", "Starbright Toys", "Giggleworks", "TinyTitan",
            "Brickhaven", "Funforge", "Moonpop", "Kiddo Kraft"),
    line_prefixes=("Fun", "Jolly", "Wonder", "Zoom", "Buddy", "Star", "Rocket", "Giggle", "Tiny", "Magic",
                   "Bright", "Sunny", "Dino", "Pixel"),
    line_suffixes=("Builders", "Pals", "Blast", "Quest", "World", "Bots", "Land", "Town", "Racer", "Pop",
                   "Kids", "Box", "Play", "Craft"),
    extra_features=("Safety Tested", "Great Gift Idea", "Non-Toxic Materials", "Screen-Free Fun"),
    leaves=(
        _leaf(("Toys & Games", "Building Toys", "Building Block Sets"), "Building Block Set", (14, 99),
              {"pack_size": ("250 Pieces", "500 Pieces", "1000 Pieces", "1500 Pieces"),
               "age_range": ("Ages 4+", "Ages 6+", "Ages 8+", "Ages 12+")},
              ("Compatible with Major Brands", "Storage Bin Included", "Step-by-Step Instructions",
               "STEM Learning", "Creative Free Build", "Bright Colors"),
              "creative building and STEM play", ("pack_size", "age_range")),
        _leaf(("Toys & Games", "Puzzles", "Jigsaw Puzzles"), "Jigsaw Puzzle", (9, 34),
              {"pack_size": ("300 Pieces", "500 Pieces", "1000 Pieces", "1500 Pieces"),
               "theme": ("Landscape", "Animals", "World Map", "Vintage Art", "Space")},
              ("Precision-Cut Pieces", "Anti-Glare Finish", "Poster Included", "Recycled Board",
               "Snug Fit Pieces", "Family Activity"),
              "relaxing evenings and family game nights", ("pack_size", "theme")),
        _leaf(("Toys & Games", "Games", "Board Games"), "Board Game", (14, 59),
              {"edition": ("Standard Edition", "Deluxe Edition", "Travel Edition"),
               "player_count": ("2-4 Players", "2-6 Players", "3-8 Players"),
               "age_range": ("Ages 8+", "Ages 10+", "Ages 14+")},
              ("30-Minute Play Time", "Easy to Learn", "Strategy and Luck", "Family Friendly",
               "High Replay Value", "Premium Components"),
              "game nights with family and friends", ("player_count", "age_range")),
        _leaf(("Toys & Games", "Plush Toys", "Stuffed Animals"), "Stuffed Animal", (9, 39),
              {"color": ("Brown", "White", "Gray", "Pink", "Cream"),
               "size": ("8 Inch", "12 Inch", "18 Inch", "24 Inch")},
              ("Super Soft Plush", "Embroidered Eyes", "Surface Washable", "Huggable Size",
               "Gift Box Included", "Hypoallergenic Filling"),
              "cuddles, naps and imaginative play", ("size",)),
        _leaf(("Toys & Games", "Remote Control Toys", "RC Cars"), "RC Car", (24, 129),
              {"color": ("Red", "Blue", "Green", "Orange", "Black"),
               "scale": ("1:10", "1:16", "1:18", "1:24")},
              ("2.4GHz Remote", "All-Terrain Tires", "Rechargeable Battery", "25 MPH Top Speed",
               "Shock Absorbers", "LED Headlights"),
              "backyard racing and off-road fun", ("scale",)),
        _leaf(("Toys & Games", "Arts & Crafts", "Modeling Clay Kits"), "Modeling Clay Kit", (9, 34),
              {"pack_size": ("24 Colors", "36 Colors", "50 Colors"),
               "item_form": ("Air Dry Clay", "Polymer Clay", "Soft Dough")},
              ("Sculpting Tools Included", "Non-Sticky Texture", "Idea Booklet", "Resealable Storage",
               "Bright Mixable Colors", "Kid Safe"),
              "sculpting, crafting and classroom projects", ("pack_size", "item_form")),
        _leaf(("Toys & Games", "Outdoor Play", "Kites"), "Kite", (9, 39),
              {"color": ("Rainbow", "Red", "Blue", "Green", "Yellow"),
               "size": ("Small", "Medium", "Large")},
              ("Easy to Fly", "Ripstop Nylon Sail", "100 ft Line Included", "Sturdy Frame", "Long Tail",
               "Beach Ready"),
              "windy days at the park or the beach", ("size",)),
    ),
)

OFFICE = TopCategory(
    name="Office Products",
    brands=("Deskline", "Inkwell & Co", "Papermint", "ClearDesk", "Notara", "Scribewell", "Officio",
            "Linemark", "Quillory", "Tasksmith"),
    line_prefixes=("Desk", "Clear", "Swift", "Smart", "Paper", "Ink", "Neat", "Prime", "Focus", "Sharp",
                   "Metro", "Task", "Quill", "Note"),
    line_suffixes=("Write", "Mark", "Note", "Line", "Pro", "Works", "Grid", "Flow", "Dock", "Point", "File",
                   "Mate", "Script", "Edge"),
    extra_features=("Office Essential", "Bulk Value Pack", "Smudge Resistant", "Satisfaction Guarantee"),
    leaves=(
        _leaf(("Office Products", "Writing Supplies", "Gel Pens"), "Gel Pens", (6, 29),
              {"color": ("Black", "Blue", "Red", "Assorted Colors"),
               "pack_size": ("12 Count", "24 Count", "48 Count"),
               "tip_size": ("0.5mm", "0.7mm", "1.0mm")},
              ("Quick-Dry Ink", "Comfort Grip", "Retractable", "Smooth Writing", "Acid-Free Ink",
               "Refillable"),
              "note-taking, journaling and office work", ("tip_size", "pack_size")),
        _leaf(("Office Products", "Paper", "Spiral Notebooks"), "Spiral Notebook", (5, 24),
              {"color": ("Black", "Blue", "Red", "Green", "Assorted"),
               "ruling": ("College Ruled", "Wide Ruled", "Dot Grid", "Graph"),
               "size": ("A5", "B5", "Letter")},
              ("Perforated Pages", "Heavyweight Paper", "Durable Poly Cover", "Pocket Divider", "100 Sheets",
               "Bleed-Resistant"),
              "class notes, planning and sketches", ("ruling", "size")),
        _leaf(("Office Products", "Desk Accessories", "Desk Organizers"), "Desk Organizer", (12, 49),
              {"color": ("Black", "White", "Natural", "Gray"),
               "material": ("Mesh Metal", "Bamboo", "Acrylic", "Faux Leather")},
              ("5 Compartments", "Sliding Drawer", "Pen Holder Section", "Non-Slip Base", "Easy Assembly",
               "Stackable Trays"),
              "a tidy, clutter-free desk", ("material",)),
        _leaf(("Office Products", "Office Electronics", "Label Makers"), "Label Maker", (19, 79),
              {"color": ("White", "Black", "Blue", "Pink"),
               "connector_type": ("Bluetooth", "USB-C", "Micro-USB")},
              ("Inkless Thermal Printing", "App Templates", "Rechargeable Battery", "Multiple Fonts",
               "Waterproof Labels", "Compact Handheld"),
              "organizing home, office and pantry", ("connector_type",)),
        _leaf(("Office Products", "Office Furniture", "Office Chairs"), "Ergonomic Office Chair", (89, 399),
              {"color": ("Black", "Gray", "White", "Blue"),
               "material": ("Mesh", "Faux Leather", "Fabric")},
              ("Adjustable Lumbar Support", "Flip-Up Armrests", "360 Degree Swivel", "Tilt Lock",
               "Breathable Back", "Smooth-Rolling Casters"),
              "long hours at a home or office desk", ("material",)),
        _leaf(("Office Products", "Filing", "Ring Binders"), "Ring Binder", (4, 29),
              {"color": ("Black", "White", "Blue", "Red", "Green"),
               "size": ("1 Inch", "1.5 Inch", "2 Inch", "3 Inch"),
               "pack_size": ("Single", "Pack of 4", "Pack of 12")},
              ("Clear View Cover", "Slant D-Rings", "Inside Pockets", "Heavy Duty", "Spine Label Holder",
               "Non-Stick Finish"),
              "organizing documents, reports and class papers", ("size", "pack_size")),
        _leaf(("Office Products", "Writing Supplies", "Highlighters"), "Highlighters", (4, 19),
              {"color": ("Yellow", "Assorted", "Pastel", "Neon"),
               "pack_size": ("6 Count", "12 Count", "24 Count")},
              ("Chisel Tip", "Smear Guard Ink", "Quick Drying", "Long Lasting", "Bright Fluorescent Color",
               "Pocket Clip"),
              "studying, marking up and color coding", ("pack_size",)),
    ),
)

PETS = TopCategory(
    name="Pet Supplies",
    brands=("Pawsome Co", "Whiskerly", "Barkwell", "Tailtown", "Purrfect Path", "Houndly", "Kibblecraft",
            "Snoutsy", "Cozy Critter", "Wagmore"),
    line_prefixes=("Paw", "Whisker", "Tail", "Happy", "Furry", "Cozy", "Pure", "Wild", "Pup", "Kitty", "Snug",
                   "Meadow", "Fetch", "Purr"),
    line_suffixes=("Pals", "Paws", "Nest", "Bites", "Comfort", "Care", "Trail", "Crunch", "Play", "Den",
                   "Buddy", "Wag", "Rest", "Life"),
    extra_features=("Vet Recommended", "Made in the USA", "Pet Safe Materials", "Satisfaction Guarantee"),
    leaves=(
        _leaf(("Pet Supplies", "Dogs", "Dry Dog Food"), "Dry Dog Food", (14, 89),
              {"size": ("4 lb Bag", "15 lb Bag", "30 lb Bag"),
               "flavor": ("Chicken & Rice", "Lamb & Brown Rice", "Salmon & Sweet Potato", "Beef & Barley",
                          "Turkey & Oatmeal"),
               "life_stage": ("Puppy", "Adult", "Senior")},
              ("Real Meat First Ingredient", "No Corn or Soy", "Added Probiotics", "Omega-3 for Coat",
               "Grain-Inclusive Recipe", "Crunchy Kibble"),
              "complete, balanced daily nutrition", ("flavor", "life_stage")),
        _leaf(("Pet Supplies", "Dogs", "Dog Collars"), "Dog Collar", (8, 34),
              {"size": ("XS", "S", "M", "L", "XL"),
               "color": ("Black", "Red", "Blue", "Pink", "Orange", "Camo"),
               "material": ("Nylon", "Leather", "Biothane")},
              ("Quick-Release Buckle", "Reflective Stitching", "Adjustable Fit", "Durable D-Ring",
               "Soft Padded Lining", "Waterproof"),
              "daily walks and ID tags", ("material", "color")),
        _leaf(("Pet Supplies", "Dogs", "Dog Beds"), "Orthopedic Dog Bed", (24, 129),
              {"size": ("S", "M", "L", "XL"),
               "color": ("Gray", "Brown", "Navy", "Beige")},
              ("Memory Foam Base", "Removable Washable Cover", "Non-Skid Bottom", "Bolster Edges",
               "Waterproof Liner", "Joint Support"),
              "restful sleep for dogs of every age", ("color",)),
        _leaf(("Pet Supplies", "Cats", "Cat Litter"), "Clumping Cat Litter", (9, 39),
              {"scent": ("Unscented", "Lavender", "Fresh Scent", "Baking Soda"),
               "weight": ("10 lb", "20 lb", "40 lb")},
              ("99% Dust-Free", "Hard Clumping", "Odor Lock Formula", "Low Tracking", "Multi-Cat Strength",
               "Easy Scoop"),
              "a fresh, clean litter box", ("weight",)),
        _leaf(("Pet Supplies", "Cats", "Cat Trees"), "Cat Tree", (39, 159),
              {"color": ("Gray", "Beige", "Dark Gray", "White"),
               "height": ("32 Inch", "52 Inch", "72 Inch")},
              ("Sisal Scratching Posts", "Plush Condo", "Top Perch", "Dangling Toys", "Stable Wide Base",
               "Easy Assembly"),
              "climbing, scratching and napping", ("height",)),
        _leaf(("Pet Supplies", "Dogs", "Dog Treats"), "Dog Treats", (6, 29),
              {"flavor": ("Peanut Butter", "Chicken", "Bacon", "Sweet Potato", "Beef"),
               "pack_size": ("6 oz", "12 oz", "24 oz")},
              ("Soft and Chewy", "Training Size", "No Artificial Colors", "High Protein", "Resealable Bag",
               "Grain-Free"),
              "training rewards and everyday treats", ("pack_size",)),
        _leaf(("Pet Supplies", "Fish & Aquatic", "Aquarium Filters"), "Aquarium Filter", (14, 79),
              {"capacity": ("10 Gallon", "20 Gallon", "40 Gallon", "75 Gallon"),
               "material": ("Activated Carbon", "Bio Ceramic", "Sponge")},
              ("Quiet Operation", "Adjustable Flow", "3-Stage Filtration", "Easy Cartridge Change",
               "Hang-On-Back Design", "Crystal Clear Water"),
              "clean, healthy aquarium water", ("material",)),
    ),
)

GROCERY = TopCategory(
    name="Grocery",
    brands=("Harvest Table", "Golden Acre", "Morning Grove", "Prairie Hearth", "Orchard Lane",
            "Wildfield Farms", "Sunvale", "Millbrook Pantry", "Rustica Foods", "Greenhollow"),
    line_prefixes=("Harvest", "Golden", "Morning", "Farm", "Sunny", "Orchard", "Wild", "Pure", "Heritage",
                   "Rustic", "Green", "Prairie", "Valley", "Hearty"),
    line_suffixes=("Select", "Reserve", "Classic", "Blend", "Fields", "Crunch", "Harvest", "Roast", "Grove",
                   "Table", "Pantry", "Choice", "Batch", "Acres"),
    extra_features=("Non-GMO", "Kosher Certified", "No Artificial Flavors", "Resealable Pack"),
    leaves=(
        _leaf(("Grocery", "Beverages", "Ground Coffee"), "Ground Coffee", (7, 29),
              {"flavor": ("Medium Roast", "Dark Roast", "French Vanilla", "Hazelnut", "Colombian",
                          "Breakfast Blend"),
               "size": ("12 oz", "24 oz", "32 oz")},
              ("100% Arabica Beans", "Small-Batch Roasted", "Rich and Smooth", "Fair Trade Certified",
               "Drip and Pour-Over Grind", "Nitrogen-Flushed Freshness"),
              "a rich cup of coffee every morning", ("size",)),
        _leaf(("Grocery", "Beverages", "Green Tea"), "Green Tea Bags", (4, 19),
              {"flavor": ("Original", "Jasmine", "Mint", "Lemon Ginger", "Honey"),
               "pack_size": ("20 Count", "40 Count", "100 Count")},
              ("Naturally Antioxidant", "Individually Wrapped", "Whole Leaf Tea", "Zero Calories",
               "Caffeine Boost", "Compostable Bags"),
              "a calm, refreshing tea break", ("pack_size",)),
        _leaf(("Grocery", "Snacks", "Protein Bars"), "Protein Bars", (12, 39),
              {"flavor": ("Chocolate Peanut Butter", "Cookies & Cream", "Salted Caramel", "Birthday Cake",
                          "Almond Fudge"),
               "pack_size": ("Pack of 6", "Pack of 12", "Pack of 24")},
              ("20g Protein", "Low Sugar", "Gluten-Free", "High Fiber", "On-the-Go Snack",
               "No Sugar Alcohols"),
              "post-workout fuel and busy days", ("pack_size",)),
        _leaf(("Grocery", "Snacks", "Mixed Nuts"), "Mixed Nuts", (8, 34),
              {"flavor": ("Lightly Salted", "Unsalted", "Honey Roasted", "Sea Salt & Pepper"),
               "size": ("10 oz", "24 oz", "40 oz")},
              ("Premium Cashews and Almonds", "Dry Roasted", "Resealable Canister", "Plant Protein",
               "Heart-Healthy Fats", "Party Size"),
              "snacking, trail mix and entertaining", ("size",)),
        _leaf(("Grocery", "Pantry Staples", "Olive Oil"), "Extra Virgin Olive Oil", (9, 39),
              {"size": ("16.9 fl oz", "25.3 fl oz", "33.8 fl oz", "68 fl oz"),
               "item_form": ("Glass Bottle", "Tin", "Spray")},
              ("Cold Pressed", "First Harvest", "Single Origin", "Rich Peppery Finish",
               "Dark Bottle Protection", "Ideal for Dressings"),
              "dressings, sauteing and finishing dishes", ("item_form",)),
        _leaf(("Grocery", "Pantry Staples", "Pasta"), "Durum Wheat Pasta", (6, 24),
              {"pack_size": ("Pack of 4", "Pack of 8", "Pack of 12"),
               "item_form": ("Spaghetti", "Penne", "Fusilli", "Rigatoni", "Farfalle")},
              ("Bronze-Cut Texture", "Slow Dried", "Imported from Italy", "Holds Sauce Well",
               "Ready in 10 Minutes", "Vegan"),
              "weeknight dinners and family meals", ("item_form",)),
        _leaf(("Grocery", "Breakfast", "Granola"), "Granola", (5, 19),
              {"flavor": ("Honey Almond", "Maple Pecan", "Dark Chocolate", "Berry Crunch", "Coconut Cashew"),
               "size": ("11 oz", "24 oz", "32 oz")},
              ("Whole Grain Oats", "Crunchy Clusters", "No Refined Sugar", "Good Source of Fiber",
               "Great with Yogurt", "Baked in Small Batches"),
              "breakfast bowls and quick snacks", ("size",)),
    ),
)

TOOLS = TopCategory(
    name="Tools & Home Improvement",
    brands=("Torqmaster", "Forgeline", "Boltcraft", "Hexwell", "Steelhand", "Gritstone", "RapidFix",
            "Titanbuilt", "Ridgeway Tools", "Anvilworks"),
    line_prefixes=("Iron", "Steel", "Torque", "Forge", "Titan", "Grit", "Hex", "Volt", "Rapid", "Brick",
                   "Cobalt", "Granite", "Strong", "Work"),
    line_suffixes=("Drive", "Force", "Works", "Grip", "Pro", "Max", "Line", "Tek", "Edge", "Lock", "Fix",
                   "Craft", "Hold", "Master"),
    extra_features=("Jobsite Tough", "3-Year Warranty", "Professional Grade", "Storage Case Included"),
    leaves=(
        _leaf(("Tools & Home Improvement", "Power Tools", "Cordless Drills"), "Cordless Drill", (49, 199),
              {"voltage": ("12V", "18V", "20V Max"),
               "item_form": ("Tool Only", "Kit with 1 Battery", "Kit with 2 Batteries"),
               "color": ("Yellow", "Red", "Blue", "Black")},
              ("Brushless Motor", "2-Speed Gearbox", "LED Work Light", "1/2 Inch Keyless Chuck",
               "21+1 Clutch", "Fast Charger"),
              "drilling and driving around the house and jobsite", ("voltage", "item_form")),
        _leaf(("Tools & Home Improvement", "Hand Tools", "Screwdriver Sets"), "Screwdriver Set", (12, 59),
              {"pack_size": ("6 Pieces", "12 Pieces", "32 Pieces", "64 Pieces"),
               "material": ("Chrome Vanadium Steel", "S2 Steel", "Hardened Carbon Steel")},
              ("Magnetic Tips", "Cushion Grip Handles", "Precision Bits", "Storage Case",
               "Phillips and Flathead", "Rust Resistant"),
              "repairs, assembly and electronics work", ("material",)),
        _leaf(("Tools & Home Improvement", "Lighting", "LED Light Bulbs"), "LED Light Bulb", (7, 39),
              {"wattage": ("40W Equivalent", "60W Equivalent", "75W Equivalent", "100W Equivalent"),
               "color": ("Soft White 2700K", "Bright White 3000K", "Daylight 5000K"),
               "pack_size": ("4 Pack", "6 Pack", "12 Pack")},
              ("Dimmable", "15,000 Hour Life", "Energy Saving", "Instant On", "Flicker-Free", "UL Listed"),
              "bright, efficient lighting in every room", ("color", "pack_size")),
        _leaf(("Tools & Home Improvement", "Hardware", "Drawer Pulls"), "Drawer Pull", (9, 49),
              {"size": ("3 Inch", "3.75 Inch", "5 Inch", "6.3 Inch"),
               "color": ("Matte Black", "Brushed Nickel", "Brushed Brass", "Chrome"),
               "pack_size": ("10 Pack", "25 Pack", "30 Pack")},
              ("Mounting Screws Included", "Solid Construction", "Modern Bar Style", "Easy Install",
               "Corrosion Resistant", "Kitchen Cabinet Upgrade"),
              "updating kitchen and bathroom cabinets", ("color", "pack_size")),
        _leaf(("Tools & Home Improvement", "Safety", "Work Gloves"), "Work Gloves", (8, 34),
              {"size": ("S", "M", "L", "XL", "XXL"),
               "material": ("Leather", "Nitrile Coated", "Cut-Resistant HPPE", "Synthetic Leather")},
              ("Touchscreen Fingertips", "Reinforced Palm", "Breathable Back", "Secure Wrist Closure",
               "Abrasion Resistant", "Machine Washable"),
              "yard work, construction and DIY projects", ("material",)),
        _leaf(("Tools & Home Improvement", "Measuring Tools", "Tape Measures"), "Tape Measure", (7, 34),
              {"length": ("16 ft", "25 ft", "35 ft"),
               "color": ("Yellow", "Black", "Orange")},
              ("Magnetic Hook", "Shock-Absorbing Case", "Fractional Markings", "Belt Clip", "Auto Lock Blade",
               "Wide Standout Blade"),
              "accurate measuring on any project", ("color",)),
        _leaf(("Tools & Home Improvement", "Electrical", "Extension Cords"), "Extension Cord", (9, 59),
              {"length": ("6 ft", "10 ft", "25 ft", "50 ft"),
               "color": ("White", "Black", "Orange", "Green"),
               "gauge": ("16 AWG", "14 AWG", "12 AWG")},
              ("Indoor and Outdoor Rated", "Lighted End", "3-Prong Grounded", "Weather Resistant Jacket",
               "Flexible in Cold", "UL Listed"),
              "powering tools, lights and appliances", ("gauge",)),
        _leaf(("Tools & Home Improvement", "Plumbing", "Shower Heads"), "Shower Head", (19, 99),
              {"color": FINISH_COLORS,
               "flow_rate": ("1.8 GPM", "2.0 GPM", "2.5 GPM"),
               "spray_settings": ("3 Settings", "5 Settings", "9 Settings")},
              ("High Pressure Spray", "Tool-Free Install", "Anti-Clog Nozzles", "Rainfall Coverage",
               "Handheld Option", "Water Saving"),
              "a relaxing, high-pressure shower", ("flow_rate", "spray_settings")),
    ),
)

TOP_CATEGORIES: tuple[TopCategory, ...] = (
    ELECTRONICS, CLOTHING, HOME_KITCHEN, BEAUTY, SPORTS, TOYS, OFFICE, PETS, GROCERY, TOOLS,
)
TOP_CATEGORY_BY_NAME: dict[str, TopCategory] = {t.name: t for t in TOP_CATEGORIES}
LEAVES: tuple[Leaf, ...] = tuple(leaf for t in TOP_CATEGORIES for leaf in t.leaves)
LEAF_BY_PATH: dict[tuple[str, ...], Leaf] = {leaf.path: leaf for leaf in LEAVES}
LEAF_BY_NAME: dict[str, Leaf] = {leaf.name: leaf for leaf in LEAVES}

#: Third-party marketplace sellers (the rest are brand stores).
MARKETPLACE_STORES = ("Brightline Goods", "Harbor & Pine Trading", "QuickCart Outlet", "Northgate Supply",
                      "Bluebird Marketplace", "Evergreen Deals", "Summit Retail Co", "Cornerstone Direct",
                      "Redwood Wholesale", "Lakeside Emporium", "Metro Value Store", "Sunrise Sellers")

#: Model modifiers used for line extensions ("PowerPort Pro") and to keep names unique.
LINE_MODIFIERS = ("Pro", "Max", "Mini", "Plus", "Lite", "Ultra", "Air", "Neo", "Elite", "Prime", "SE", "X",
                  "II", "Sport", "Go")

#: Display labels for attributes in descriptions (default: the name with spaces).
ATTRIBUTE_LABELS = {"connector_type": "connector", "item_form": "form", "pack_size": "pack size",
                    "screen_size": "screen size", "spf": "SPF", "port_count": "ports"}


def attribute_label(attribute: str) -> str:
    return ATTRIBUTE_LABELS.get(attribute, attribute.replace("_", " "))


def product_lines(top: TopCategory) -> tuple[str, ...]:
    """A category's product-line names: prefix + suffix syllables ("PowerPort", "AeroFlex").

    Pairs that repeat a syllable ("FlexFlex") or collide with a brand name are dropped;
    the order is fixed, so line k is the same name in every process.
    """
    brands = {b.lower().replace(" ", "") for t in TOP_CATEGORIES for b in t.brands}
    out: list[str] = []
    seen: set[str] = set()
    for p in top.line_prefixes:
        for s in top.line_suffixes:
            name = p + s
            key = name.lower()
            if p.lower() == s.lower() or key in brands or key in seen:
                continue
            seen.add(key)
            out.append(name)
    return tuple(out)


def all_product_lines() -> tuple[str, ...]:
    """Every distinct product-line name over all top categories (first occurrence order)."""
    seen: dict[str, None] = {}
    for t in TOP_CATEGORIES:
        for line in t.product_lines:
            seen.setdefault(line, None)
    return tuple(seen)


def _global_pools() -> dict[str, tuple[str, ...]]:
    pools: dict[str, dict[str, None]] = {}
    for leaf in LEAVES:
        for attr, values in leaf.attributes:
            d = pools.setdefault(attr, {})
            for v in values:
                d.setdefault(v, None)
    # Connectors a real catalogue may carry beyond the synthetic leaves' pools.
    for v in ("HDMI", "DisplayPort", "3.5mm Aux"):
        pools["connector_type"].setdefault(v, None)
    for v in APPAREL_SIZES:
        pools["size"].setdefault(v, None)
    return {k: tuple(v) for k, v in pools.items()}


#: Every attribute's value pool: the union of the leaves' pools (in first-seen order).
ATTRIBUTE_POOLS: dict[str, tuple[str, ...]] = _global_pools()
