"""The tools by domain; `ecom_bench.world.toolkit.Toolkit` combines them."""
