// placeholder until the kernels work lands
