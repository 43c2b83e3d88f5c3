"""The benchmark of learning algorithms on Draw (``draw-bench``): algorithms by games by seeds at
fixed budgets, each cell a JSON record with its learning curve, aggregated with rliable. The
interface an algorithm implements is :mod:`train.bench.protocol`; the docs page "Benchmark"
describes the suite."""
