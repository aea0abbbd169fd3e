"""Places: the versioned vegetarian-friendly place catalog and its read-only search (docs/design.md §5)."""

from shared.places.catalog import PlaceCatalog, load_place_catalog
from shared.places.search import UnknownDietaryType, search_local_places

__all__ = ["PlaceCatalog", "UnknownDietaryType", "load_place_catalog", "search_local_places"]
