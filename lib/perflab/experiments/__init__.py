"""The chapters' experiments. Importing a module registers its experiments."""
